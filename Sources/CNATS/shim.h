#ifndef SCANTRACK_CNATS_SHIM_H
#define SCANTRACK_CNATS_SHIM_H
#include <nats/nats.h>
#endif
