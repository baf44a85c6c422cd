// GptConfig validation and the flat parameter layout with GPT-2's tensor names.
#include "sealtrain/formats/gpt_config.h"

#include <cmath>
#include <limits>
#include <utility>

namespace sealtrain::trainer {

namespace {

Error invalid(const std::string& sentence)
{
    return Error(ErrorCode::InvalidArgument, sentence);
}

}  // namespace

Result<void> GptConfig::validate() const
{
    if (vocabSize == 0)
        return invalid("The model's vocabulary size is 0; give it at least one token.");
    if (paddedVocabSize < vocabSize)
        return invalid("The padded vocabulary size is smaller than the vocabulary; make it at "
                       "least as large.");
    if (contextLength == 0)
        return invalid("The model's context length is 0; give it at least one position.");
    if (layers == 0)
        return invalid("The model has no layers; give it at least one.");
    if (layers > kMaxLayers)
        return invalid("The model has more than 1,024 layers, which no GPT this trainer computes "
                       "has; give it fewer.");
    if (heads == 0)
        return invalid("The model has no attention heads; give it at least one.");
    if (width == 0 || width % heads != 0)
        return invalid("The model's width is not a positive multiple of its number of heads; "
                       "choose a width that the heads divide.");
    // Every index the kernels compute (B·T·4C, B·H·T·T, BLAS dimensions) must fit in int for
    // cblas; refuse shapes whose single tensors could not be addressed that way.
    constexpr auto intMax = static_cast<std::size_t>(std::numeric_limits<int>::max());
    if (paddedVocabSize > intMax / width || contextLength > intMax / width || width > intMax / 4)
        return invalid("The model's shape is too large for 32-bit BLAS indices; make it smaller.");
    return success();
}

std::size_t GptConfig::padVocab(std::size_t vocab, std::size_t multiple)
{
    return (vocab + multiple - 1) / multiple * multiple;
}

GptConfig GptConfig::gpt2Small()
{
    GptConfig config;
    config.vocabSize = 50257;
    config.paddedVocabSize = 50304;
    config.contextLength = 1024;
    config.layers = 12;
    config.heads = 12;
    config.width = 768;
    return config;
}

ParameterLayout::ParameterLayout(const GptConfig& config)
{
    const std::size_t c = config.width;
    // GPT-2 scales the initialisation of the projections that write into the residual stream by
    // 1/sqrt(2·layers), so that the stream's variance does not grow with depth.
    const double baseStd = 0.02;
    const double residualStd = baseStd / std::sqrt(2.0 * static_cast<double>(config.layers));

    auto add = [this](std::string name, std::vector<std::size_t> shape, double initStd,
                      float initConstant) {
        ParameterTensor tensor;
        tensor.name = std::move(name);
        tensor.size = 1;
        for (const std::size_t extent : shape)
            tensor.size *= extent;
        tensor.weightDecay = shape.size() == 2;
        tensor.shape = std::move(shape);
        tensor.offset = totalSize_;
        tensor.initStd = initStd;
        tensor.initConstant = initConstant;
        totalSize_ += tensor.size;
        tensors_.push_back(std::move(tensor));
    };
    auto weight = [&](const std::string& name, std::size_t in, std::size_t out, double std) {
        add(name + ".weight", {in, out}, std, 0.0F);
        add(name + ".bias", {out}, 0.0, 0.0F);
    };
    auto layerNorm = [&](const std::string& name) {
        add(name + ".weight", {c}, 0.0, 1.0F);
        add(name + ".bias", {c}, 0.0, 0.0F);
    };

    add("wte.weight", {config.paddedVocabSize, c}, baseStd, 0.0F);
    add("wpe.weight", {config.contextLength, c}, baseStd, 0.0F);
    for (std::size_t layer = 0; layer < config.layers; ++layer) {
        const std::string prefix = "h." + std::to_string(layer) + ".";
        layerNorm(prefix + "ln_1");
        weight(prefix + "attn.c_attn", c, 3 * c, baseStd);
        weight(prefix + "attn.c_proj", c, c, residualStd);
        layerNorm(prefix + "ln_2");
        weight(prefix + "mlp.c_fc", c, 4 * c, baseStd);
        weight(prefix + "mlp.c_proj", 4 * c, c, residualStd);
    }
    layerNorm("ln_f");
}

const ParameterTensor* ParameterLayout::find(const std::string& name) const
{
    for (const auto& tensor : tensors_) {
        if (tensor.name == name)
            return &tensor;
    }
    return nullptr;
}

BlockTensors blockTensors(std::size_t layer)
{
    const std::size_t first = kTensorsBeforeBlocks + layer * kTensorsPerBlock;
    return BlockTensors{first,     first + 1, first + 2, first + 3, first + 4,  first + 5,
                        first + 6, first + 7, first + 8, first + 9, first + 10, first + 11};
}

double trainingFlopsPerToken(const GptConfig& config, std::size_t sequenceLength)
{
    const ParameterLayout layout(config);
    const double matmulParameters = static_cast<double>(layout.totalSize())
                                    - static_cast<double>(config.contextLength * config.width);
    return 6.0 * matmulParameters
           + 6.0 * static_cast<double>(config.layers) * static_cast<double>(config.width)
                 * static_cast<double>(sequenceLength);
}

}  // namespace sealtrain::trainer
