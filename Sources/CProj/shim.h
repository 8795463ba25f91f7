// PROJ's geodesic routines (Karney's algorithms): geod_init, geod_inverse, geod_direct.
#include <geodesic.h>
