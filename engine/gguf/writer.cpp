// placeholder while the header lands; replaced by the implementation
#include "gguf/writer.h"
