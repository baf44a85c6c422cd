// The shape of a GPT (decoder-only transformer) and the layout of its parameters in one flat
// buffer, tensor by tensor, under the names GPT-2 uses in Hugging Face's GPT2Model.
//
// Linear weights are stored as Hugging Face's Conv1D stores them: (in, out), row-major, so that
// a layer computes y = x · W + b and the export to safetensors is a byte copy. The token
// embedding wte is (paddedVocabSize, width); rows from vocabSize on are padding (zero, never
// looked up, masked out of the softmax) and are dropped on export.
#pragma once

#include "sealtrain/base/result.h"

#include <cstddef>
#include <string>
#include <vector>

namespace sealtrain::trainer {

// The most layers a shape may have (GPT-3 175B has 96): a bound on what a recorded or imported
// configuration can make a reader lay out.
inline constexpr std::size_t kMaxLayers = 1024;

struct GptConfig {
    std::size_t vocabSize = 0;        // tokens the model reads and predicts
    std::size_t paddedVocabSize = 0;  // wte rows and logits per position; >= vocabSize
    std::size_t contextLength = 0;    // positions (wpe rows); the longest sequence
    std::size_t layers = 0;
    std::size_t heads = 0;
    std::size_t width = 0;  // channels C; a multiple of heads

    [[nodiscard]] std::size_t headSize() const { return width / heads; }

    // Says what is wrong with the shape, if anything, in one sentence.
    [[nodiscard]] Result<void> validate() const;

    // The smallest multiple of `multiple` that holds `vocab` tokens (GEMM-friendly padding).
    [[nodiscard]] static std::size_t padVocab(std::size_t vocab, std::size_t multiple = 64);

    // GPT-2 small (124M): 50257 tokens padded to 50304, 1024 positions, 12 layers, 12 heads, 768.
    [[nodiscard]] static GptConfig gpt2Small();
};

// One named tensor inside the flat parameter buffer.
struct ParameterTensor {
    std::string name;                // Hugging Face GPT2Model name: "wte.weight", "h.0.ln_1.bias"
    std::vector<std::size_t> shape;  // row-major; linear weights are (in, out)
    std::size_t offset = 0;          // first element in the flat buffer
    std::size_t size = 0;            // elements
    bool weightDecay = false;        // AdamW decays it (2-D tensors: matrices and embeddings)
    double initStd = 0.0;            // GPT-2 initialisation: normal(0, initStd), or constant below
    float initConstant = 0.0F;       // used when initStd == 0 (1 for LayerNorm weights, else 0)
};

// Where each tensor lives. Order: wte.weight, wpe.weight, then each layer h.0 … h.{L-1}
// (ln_1.weight, ln_1.bias, attn.c_attn.weight, attn.c_attn.bias, attn.c_proj.weight,
// attn.c_proj.bias, ln_2.weight, ln_2.bias, mlp.c_fc.weight, mlp.c_fc.bias, mlp.c_proj.weight,
// mlp.c_proj.bias), then ln_f.weight, ln_f.bias.
class ParameterLayout final {
public:
    explicit ParameterLayout(const GptConfig& config);

    [[nodiscard]] const std::vector<ParameterTensor>& tensors() const { return tensors_; }
    [[nodiscard]] std::size_t totalSize() const { return totalSize_; }
    // The tensor named `name`, or nullptr.
    [[nodiscard]] const ParameterTensor* find(const std::string& name) const;

private:
    std::vector<ParameterTensor> tensors_;
    std::size_t totalSize_ = 0;
};

// Indices into ParameterLayout::tensors() for one block, so that the model does not look
// tensors up by name on every step.
struct BlockTensors {
    std::size_t ln1Weight, ln1Bias, qkvWeight, qkvBias, attnProjWeight, attnProjBias;
    std::size_t ln2Weight, ln2Bias, fcWeight, fcBias, fcProjWeight, fcProjBias;
};
inline constexpr std::size_t kTensorsBeforeBlocks = 2;  // wte, wpe
inline constexpr std::size_t kTensorsPerBlock = 12;
[[nodiscard]] BlockTensors blockTensors(std::size_t layer);

// FLOPs of one training step per token (forward + backward), the 6·N + 6·L·C·T: 6·N for
// the matmuls, N = every parameter but wpe (a lookup; wte counts as the LM head's matrix, padded
// rows included because they are computed), and 6·L·C·T for causal attention (half of PaLM's
// 12·L·C·T, which counts the masked half too), T = `sequenceLength`.
[[nodiscard]] double trainingFlopsPerToken(const GptConfig& config, std::size_t sequenceLength);

}  // namespace sealtrain::trainer
