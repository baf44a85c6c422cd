// builtBackends (built_backends.h) of a build without the CUDA parts: the CPU alone.
#include "sealtrain/trainer/built_backends.h"

namespace sealtrain::trainer {

ModelBackends builtBackends()
{
    return {};
}

}  // namespace sealtrain::trainer
