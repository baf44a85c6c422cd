// Sampling text from a GPT (sampling.h).
#include "sealtrain/trainer/sampling.h"

#include "sealtrain/trainer/counter_rng.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace sealtrain::trainer {

Result<std::string> sampleText(Model& model, dataset::Tokenizer& tokenizer,
                               const SampleOptions& options)
{
    if (options.temperature < 0.0 || !std::isfinite(options.temperature))
        return Error(ErrorCode::InvalidArgument,
                     "The temperature must be a number of 0 or more; pass e.g. 0.8.");
    const GptConfig& config = model.config();

    const auto& info = tokenizer.info();
    const std::uint32_t endOfText = info.endOfText.value_or(0);
    std::vector<std::uint32_t> prompt;
    tokenizer.encode(options.prompt, prompt);
    if (prompt.empty())
        prompt.push_back(endOfText);
    for (const auto id : prompt) {
        if (id >= config.vocabSize)
            return Error(ErrorCode::InvalidArgument,
                         "The prompt has a token the model does not know; it was trained with "
                         "another tokenizer.");
    }
    std::vector<std::int32_t> tokens(prompt.begin(), prompt.end());
    const CounterRng rng(options.seed);
    const std::size_t vocab = config.vocabSize;
    std::vector<float> probabilities(vocab);
    std::vector<double> weights(vocab);
    std::vector<std::size_t> order(vocab);
    std::vector<std::uint32_t> generated;
    for (std::size_t n = 0; n < options.length; ++n) {
        const std::size_t seq = std::min(tokens.size(), config.contextLength);
        const std::span<const std::int32_t> window(tokens.data() + tokens.size() - seq, seq);
        const std::vector<std::int32_t> noTargets(seq, -1);
        auto loss = model.forward(window, noTargets, 1, seq);
        if (!loss)
            return loss.error();
        SEALTRAIN_TRY(model.probabilities(seq - 1, probabilities));
        std::size_t next = 0;
        if (options.temperature == 0.0) {
            next = static_cast<std::size_t>(
                std::max_element(probabilities.begin(), probabilities.end())
                - probabilities.begin());
        } else {
            // softmax(z / T) is proportional to softmax(z)^(1/T).
            for (std::size_t i = 0; i < vocab; ++i)
                weights[i] =
                    std::pow(static_cast<double>(probabilities[i]), 1.0 / options.temperature);
            if (options.topK > 0 && options.topK < vocab) {
                std::iota(order.begin(), order.end(), std::size_t{0});
                std::nth_element(
                    order.begin(), order.begin() + static_cast<std::ptrdiff_t>(options.topK - 1),
                    order.end(), [&](std::size_t a, std::size_t b) {
                        return weights[a] > weights[b] || (weights[a] == weights[b] && a < b);
                    });
                const double threshold = weights[order[options.topK - 1]];
                // Everything above the K-th weight stays, and as many ties with it, lowest ids
                // first, as make K in all.
                std::size_t ties = options.topK
                                   - static_cast<std::size_t>(std::count_if(
                                       weights.begin(), weights.end(),
                                       [&](double weight) { return weight > threshold; }));
                for (std::size_t i = 0; i < vocab; ++i) {
                    if (weights[i] < threshold || (weights[i] == threshold && ties == 0))
                        weights[i] = 0.0;
                    else if (weights[i] == threshold)
                        --ties;
                }
            }
            const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
            double target = rng.uniform(0, n) * total;
            next = vocab - 1;
            for (std::size_t i = 0; i < vocab; ++i) {
                if (target < weights[i] && weights[i] > 0.0) {
                    next = i;
                    break;
                }
                target -= weights[i];
            }
        }
        tokens.push_back(static_cast<std::int32_t>(next));
        generated.push_back(static_cast<std::uint32_t>(next));
    }

    std::string text = options.prompt;
    std::vector<std::uint32_t> run;
    const auto flush = [&]() -> Result<void> {
        auto decoded = tokenizer.decode(run);
        if (!decoded)
            return decoded.error();
        text += *decoded;
        run.clear();
        return success();
    };
    for (const auto id : generated) {
        if (info.endOfText && id == endOfText) {
            SEALTRAIN_TRY(flush());
            text += '\n';
        } else {
            run.push_back(id);
        }
    }
    SEALTRAIN_TRY(flush());
    return text;
}

}  // namespace sealtrain::trainer
