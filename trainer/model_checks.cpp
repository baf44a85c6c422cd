// The backends' shared checks (model_checks.h).
#include "sealtrain/trainer/model_checks.h"

#include <algorithm>
#include <string>

namespace sealtrain::trainer {

Result<void> checkCapacity(const GptConfig& config, const BatchCapacity& capacity)
{
    SEALTRAIN_TRY(config.validate());
    if (capacity.maxBatch == 0 || capacity.maxSeq == 0)
        return Error(ErrorCode::InvalidArgument,
                     "The batch size and sequence length must be at least 1; give both.");
    if (capacity.maxSeq > config.contextLength)
        return Error(ErrorCode::InvalidArgument,
                     "The sequence length " + std::to_string(capacity.maxSeq)
                         + " is longer than the model's context of "
                         + std::to_string(config.contextLength)
                         + " positions; shorten the sequences or lengthen the context.");
    return success();
}

Result<void> checkBatch(const GptConfig& config, const BatchCapacity& capacity,
                        std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                        std::size_t batch, std::size_t seq)
{
    if (batch == 0 || batch > capacity.maxBatch || seq == 0 || seq > capacity.maxSeq)
        return Error(ErrorCode::InvalidArgument,
                     "The batch is " + std::to_string(batch) + " × " + std::to_string(seq)
                         + " tokens but the model was sized for at most "
                         + std::to_string(capacity.maxBatch) + " × "
                         + std::to_string(capacity.maxSeq)
                         + "; create it with a larger batch or sequence length.");
    const std::size_t rows = batch * seq;
    if (tokens.size() != rows || targets.size() != rows)
        return Error(ErrorCode::InvalidArgument,
                     "The tokens and targets must each hold batch × sequence length values; "
                     "pass arrays of that size.");
    const auto vocab = static_cast<std::int64_t>(config.vocabSize);
    if (std::any_of(tokens.begin(), tokens.end(),
                    [vocab](std::int32_t t) { return t < 0 || t >= vocab; }))
        return Error(ErrorCode::InvalidArgument,
                     "A token lies outside the model's vocabulary; check the data's tokenizer.");
    if (std::any_of(targets.begin(), targets.end(),
                    [vocab](std::int32_t t) { return t < -1 || t >= vocab; }))
        return Error(ErrorCode::InvalidArgument,
                     "A target lies outside the model's vocabulary and is not -1 (masked); "
                     "check the data's tokenizer.");
    return success();
}

Result<void> checkProbabilityRow(std::size_t row, std::size_t rows, std::size_t count,
                                 std::size_t vocab)
{
    if (row >= rows || count != vocab)
        return Error(ErrorCode::InvalidArgument,
                     "The probabilities asked for lie outside the last forward pass or do not fit "
                     "the vocabulary; run forward first and pass one value per token.");
    return success();
}

Result<void> checkParameterCount(std::size_t count, std::size_t parameterCount)
{
    if (count != parameterCount)
        return Error(ErrorCode::InvalidArgument,
                     "The buffer holds " + std::to_string(count) + " values but the model has "
                         + std::to_string(parameterCount)
                         + " parameters; pass one of the layout's size.");
    return success();
}

}  // namespace sealtrain::trainer
