#include "engine/error.hpp"
