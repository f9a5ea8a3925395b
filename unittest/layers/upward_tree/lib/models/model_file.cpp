// The file reader reaching up to the factory.
#include "models/factory/model_factory.h"
