// Only the reentrant (_r) GEOS API: every call names its context, so contexts can live per thread.
#define GEOS_USE_ONLY_R_API
#include <geos_c.h>
