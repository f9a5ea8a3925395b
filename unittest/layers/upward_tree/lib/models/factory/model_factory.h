#pragma once
#include "models/model_file.h"
