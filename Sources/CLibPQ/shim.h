#ifndef SCANTRACK_CLIBPQ_SHIM_H
#define SCANTRACK_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
