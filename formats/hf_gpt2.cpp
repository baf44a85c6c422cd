// Hugging Face's GPT-2 folder format (hf_gpt2.h).
#include "sealtrain/formats/hf_gpt2.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sealtrain::trainer {
namespace {

Error unsupported(std::string_view key, std::string_view what)
{
    return Error(ErrorCode::InvalidArgument,
                 fmt::format("The GPT-2 config's '{}' {}; Sealtrain trains GPT-2's own "
                             "architecture only (docs/formats/hf-gpt2.md).",
                             key, what));
}

// A positive integer under `key`, at most `most`.
Result<std::size_t> positive(const nlohmann::json& config, const char* key, std::size_t most)
{
    const auto found = config.find(key);
    if (found == config.end() || !found->is_number_integer() || found->get<std::int64_t>() < 1
        || found->get<std::uint64_t>() > most)
        return unsupported(key, fmt::format("must be a whole number from 1 to {}", most));
    return found->get<std::size_t>();
}

// `key`, when present, equals `expected` (a missing key takes transformers' default, which is
// `expected` for every key checked here).
template <typename T>
Result<void> fixed(const nlohmann::json& config, const char* key, const T& expected,
                   std::string_view what)
{
    const auto found = config.find(key);
    if (found == config.end() || found->is_null())
        return success();
    if constexpr (std::is_same_v<T, double>) {
        if (found->is_number() && std::abs(found->get<double>() - expected) <= expected * 1e-9)
            return success();
    } else {
        if (*found == nlohmann::json(expected))
            return success();
    }
    return unsupported(key, what);
}

}  // namespace

std::string gpt2ConfigJson(const GptConfig& config, const Gpt2SpecialTokens& tokens)
{
    const nlohmann::json json{{"activation_function", "gelu_new"},
                              {"architectures", {"GPT2LMHeadModel"}},
                              {"attn_pdrop", 0.0},
                              {"bos_token_id", tokens.bos},
                              {"embd_pdrop", 0.0},
                              {"eos_token_id", tokens.eos},
                              {"initializer_range", 0.02},
                              {"layer_norm_epsilon", 1e-5},
                              {"model_type", "gpt2"},
                              {"n_ctx", config.contextLength},
                              {"n_embd", config.width},
                              {"n_head", config.heads},
                              {"n_inner", nullptr},
                              {"n_layer", config.layers},
                              {"n_positions", config.contextLength},
                              {"reorder_and_upcast_attn", false},
                              {"resid_pdrop", 0.0},
                              {"scale_attn_by_inverse_layer_idx", false},
                              {"scale_attn_weights", true},
                              {"tie_word_embeddings", true},
                              {"torch_dtype", "float32"},
                              {"use_cache", true},
                              {"vocab_size", config.vocabSize}};
    return json.dump(2) + "\n";
}

Result<GptConfig> parseGpt2Config(std::string_view text)
{
    const auto config = nlohmann::json::parse(text, nullptr, false);
    if (!config.is_object())
        return Error(ErrorCode::InvalidArgument,
                     "The model's config.json is not a JSON object; give the folder "
                     "save_pretrained wrote.");
    SEALTRAIN_TRY(fixed(config, "model_type", std::string("gpt2"), "must be \"gpt2\""));
    SEALTRAIN_TRY(fixed(config, "activation_function", std::string("gelu_new"),
                        "must be \"gelu_new\" (GPT-2's tanh approximation)"));
    SEALTRAIN_TRY(fixed(config, "layer_norm_epsilon", 1e-5, "must be 1e-5"));
    SEALTRAIN_TRY(fixed(config, "scale_attn_weights", true, "must be true"));
    SEALTRAIN_TRY(fixed(config, "scale_attn_by_inverse_layer_idx", false, "must be false"));
    SEALTRAIN_TRY(fixed(config, "reorder_and_upcast_attn", false, "must be false"));
    SEALTRAIN_TRY(fixed(config, "tie_word_embeddings", true, "must be true (a tied LM head)"));
    GptConfig shape;
    SEALTRAIN_ASSIGN(shape.vocabSize, positive(config, "vocab_size", 1U << 20U));
    SEALTRAIN_ASSIGN(shape.contextLength, positive(config, "n_positions", 1U << 16U));
    SEALTRAIN_ASSIGN(shape.layers, positive(config, "n_layer", 256));
    SEALTRAIN_ASSIGN(shape.heads, positive(config, "n_head", 1024));
    SEALTRAIN_ASSIGN(shape.width, positive(config, "n_embd", 1U << 16U));
    if (const auto inner = config.find("n_inner");
        inner != config.end() && !inner->is_null()
        && !(inner->is_number_integer() && inner->get<std::size_t>() == 4 * shape.width))
        return unsupported("n_inner", "must be null or 4 × n_embd");
    shape.paddedVocabSize = GptConfig::padVocab(shape.vocabSize);
    SEALTRAIN_TRY(shape.validate());
    return shape;
}

Result<std::vector<float>> importGpt2Parameters(const GptConfig& config,
                                                const SafetensorsFile& file)
{
    const ParameterLayout layout(config);
    // GPT2LMHeadModel saves its base model's tensors under "transformer."; GPT2Model without it.
    const bool prefixed = file.tensors.count("transformer.wte.weight") > 0;
    const auto nameOf = [&](const std::string& name) {
        return prefixed ? "transformer." + name : name;
    };
    const auto shapeOf = [&](const ParameterTensor& tensor) {
        std::vector<std::size_t> shape = tensor.shape;
        if (tensor.name == "wte.weight")
            shape[0] = config.vocabSize;  // the padding rows stay zero
        return shape;
    };
    // Every tensor first, so that what is allocated is what the file holds (and wte's padding
    // rows), not what its config.json claims.
    for (const ParameterTensor& tensor : layout.tensors())
        SEALTRAIN_TRY(checkF32Tensor(file, nameOf(tensor.name), shapeOf(tensor)));
    const bool head = file.tensors.count("lm_head.weight") > 0;
    if (head)
        SEALTRAIN_TRY(checkF32Tensor(file, "lm_head.weight", {config.vocabSize, config.width}));
    std::vector<float> flat(layout.totalSize(), 0.0F);
    for (const ParameterTensor& tensor : layout.tensors()) {
        const std::vector<std::size_t> shape = shapeOf(tensor);
        std::size_t elements = 1;
        for (const std::size_t dimension : shape)
            elements *= dimension;
        SEALTRAIN_TRY(readF32Tensor(file, nameOf(tensor.name), shape,
                                    std::span<float>(flat).subspan(tensor.offset, elements)));
    }
    if (head) {
        const ParameterTensor* wte = layout.find("wte.weight");
        const std::size_t elements = config.vocabSize * config.width;
        std::vector<float> values(elements);
        SEALTRAIN_TRY(
            readF32Tensor(file, "lm_head.weight", {config.vocabSize, config.width}, values));
        if (!std::equal(values.begin(), values.end(),
                        flat.begin() + static_cast<std::ptrdiff_t>(wte->offset)))
            return Error(ErrorCode::Integrity,
                         "The model's lm_head.weight differs from its wte.weight; Sealtrain's "
                         "GPT-2 ties the LM head to the token embeddings, so it can not import "
                         "an untied head.");
    }
    return flat;
}

}  // namespace sealtrain::trainer
