#ifndef SCANTRACK_CWEBP_SHIM_H
#define SCANTRACK_CWEBP_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <webp/decode.h>
#endif
