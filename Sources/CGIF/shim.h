#ifndef SCANTRACK_CGIF_SHIM_H
#define SCANTRACK_CGIF_SHIM_H
#include <stddef.h>
#include <gif_lib.h>
#endif
