// Comparing runs and exporting their histories (run_compare.h).
#include "sealtrain/api/run_compare.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

namespace sealtrain::api {
namespace {

void flatten(const nlohmann::json& value, const std::string& name,
             std::vector<std::pair<std::string, std::string>>& out)
{
    if (value.is_object() && !value.empty()) {
        for (const auto& [key, inner] : value.items()) {
            std::string dotted = name;
            if (!dotted.empty())
                dotted += '.';
            dotted += key;
            flatten(inner, dotted, out);
        }
        return;
    }
    out.emplace_back(name, value.is_string() ? value.get<std::string>() : value.dump());
}

// A number as the shortest text that reads back the same.
std::string numberText(double value)
{
    return fmt::format("{}", value);
}

std::string optionalText(const std::optional<double>& value)
{
    return value ? numberText(*value) : std::string();
}

// A CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string csvField(const std::string& text)
{
    if (text.find_first_of(",\"\r\n") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (const char c : text) {
        if (c == '"')
            quoted += '"';
        quoted += c;
    }
    return quoted + '"';
}

nlohmann::json attemptJson(const RunAttemptView& attempt)
{
    return {{"attempt", attempt.attempt},
            {"worker", attempt.worker},
            {"started_unix", attempt.startedUnix},
            {"ended_unix", attempt.endedUnix},
            {"outcome", attempt.outcome},
            {"reason", attempt.reason},
            {"resumed_from_step", attempt.resumedFromStep}};
}

}  // namespace

std::vector<std::pair<std::string, std::string>> runParameters(const std::string& specJson)
{
    std::vector<std::pair<std::string, std::string>> parameters;
    const auto spec = nlohmann::json::parse(specJson, nullptr, false);
    if (spec.is_object())
        flatten(spec, "", parameters);
    return parameters;  // nlohmann's objects iterate in key order
}

std::vector<ParameterRow> compareParameters(const std::vector<RunView>& runs)
{
    std::map<std::string, ParameterRow> rows;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        for (auto& [name, value] : runParameters(runs[i].job.specJson)) {
            ParameterRow& row = rows[name];
            row.name = name;
            row.values.resize(runs.size());
            row.values[i] = std::move(value);
        }
    }
    std::vector<ParameterRow> compared;
    for (auto& [name, row] : rows) {
        // A run that lacks the parameter ("") differs from one that has it.
        row.differs = std::set<std::string>(row.values.begin(), row.values.end()).size() > 1;
        compared.push_back(std::move(row));
    }
    return compared;
}

std::string metricsCsv(const std::vector<RunView>& runs,
                       const std::vector<std::vector<RunPointView>>& histories)
{
    std::string csv = "run,name,step,attempt,loss,val_loss,lr,grad_norm,tokens_per_second,mfu,"
                      "memory_bytes\r\n";
    for (std::size_t i = 0; i < runs.size() && i < histories.size(); ++i) {
        for (const RunPointView& point : histories[i])
            csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\r\n", runs[i].job.id,
                               csvField(runs[i].job.name), point.step, point.attempt,
                               numberText(point.loss), optionalText(point.validationLoss),
                               numberText(point.learningRate), numberText(point.gradientNorm),
                               numberText(point.tokensPerSecond), numberText(point.mfu),
                               point.memoryBytes);
    }
    return csv;
}

std::string metricsJson(const std::vector<RunView>& runs,
                        const std::vector<std::vector<RunPointView>>& histories)
{
    nlohmann::json document{{"format", "sealtrain-run-metrics/1"},
                            {"runs", nlohmann::json::array()}};
    for (std::size_t i = 0; i < runs.size() && i < histories.size(); ++i) {
        nlohmann::json steps = nlohmann::json::array();
        for (const RunPointView& point : histories[i]) {
            nlohmann::json step{{"step", point.step},
                                {"attempt", point.attempt},
                                {"loss", point.loss},
                                {"lr", point.learningRate},
                                {"grad_norm", point.gradientNorm},
                                {"tokens_per_second", point.tokensPerSecond},
                                {"mfu", point.mfu},
                                {"memory_bytes", point.memoryBytes}};
            if (point.validationLoss)
                step["val_loss"] = *point.validationLoss;
            steps.push_back(std::move(step));
        }
        nlohmann::json attempts = nlohmann::json::array();
        for (const RunAttemptView& attempt : runs[i].attempts)
            attempts.push_back(attemptJson(attempt));
        document["runs"].push_back({{"run", runs[i].job.id},
                                    {"name", runs[i].job.name},
                                    {"spec_sha256", runs[i].job.specSha256},
                                    {"dataset_id", runs[i].job.datasetId},
                                    {"state", runs[i].job.state},
                                    {"attempts", attempts},
                                    {"steps", steps}});
    }
    return document.dump(2) + "\n";
}

}  // namespace sealtrain::api
