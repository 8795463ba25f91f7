// The module's functions are inline, in include/CMemory.h; SwiftPM wants a source file per C target.
#include "CMemory.h"
