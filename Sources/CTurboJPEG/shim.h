#ifndef SCANTRACK_CTURBOJPEG_SHIM_H
#define SCANTRACK_CTURBOJPEG_SHIM_H
#include <stddef.h>
#include <turbojpeg.h>
#endif
