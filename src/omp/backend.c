/* Placeholder: the CPU backend's ops table (being written). */
#include "core/internal.h"
