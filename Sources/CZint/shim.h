#ifndef SCANTRACK_CZINT_SHIM_H
#define SCANTRACK_CZINT_SHIM_H
#include <zint.h>
#endif
