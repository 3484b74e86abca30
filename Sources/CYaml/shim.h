#ifndef BLESNIFF_CYAML_SHIM_H
#define BLESNIFF_CYAML_SHIM_H
#include <yaml.h>
#endif
