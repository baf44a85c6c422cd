// BLAS identification: the trainer links OpenBLAS (BLA_VENDOR=OpenBLAS), which describes itself.
#include "sealtrain/trainer/platform_info.h"

extern "C" char* openblas_get_config(void);

namespace sealtrain::trainer {

std::string blasDescription()
{
    const char* text = openblas_get_config();
    return text == nullptr ? std::string("OpenBLAS") : std::string(text);
}

}  // namespace sealtrain::trainer
