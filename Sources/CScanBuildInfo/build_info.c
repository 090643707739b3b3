#include "scantrack_build_info.h"

#ifndef SCANTRACK_COMMIT
#define SCANTRACK_COMMIT "unknown"
#endif

const char *scantrack_build_commit(void) { return SCANTRACK_COMMIT; }
