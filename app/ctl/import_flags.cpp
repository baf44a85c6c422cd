// The options of a dataset import (import_flags.h).
#include "import_flags.h"

#include "input_file.h"

#include "sealtrain/base/encoding.h"

#include <unistd.h>

#include <iostream>

namespace sealtrain::ctl {

void addImportFlags(CLI::App* command, ImportFlags& flags)
{
    command->add_option("--name", flags.name, "Dataset name: 1-64 of a-z 0-9 _ -")->required();
    command
        ->add_option("--format", flags.format,
                     "text-files (a file is a record), text-records (blank-line separated), "
                     "jsonl, csv, or fortune ('%' lines separate records)")
        ->capture_default_str();
    command->add_option("--field", flags.field, "The JSONL field or CSV column holding the text");
    command
        ->add_option("--classification", flags.classification,
                     "Classification label, e.g. public, internal, phi")
        ->capture_default_str();
    command
        ->add_option("--policy", flags.policy,
                     "For an invalid record: skip (and report it) or reject (fail the import)")
        ->check(CLI::IsMember({"skip", "reject"}))
        ->capture_default_str();
    command->add_flag("--redact-pii", flags.redactPii,
                      "Replace possible PII with placeholders ([EMAIL], [IP], ...) before sealing");
    command->add_option("--max-record-bytes", flags.maxRecordBytes, "Longest record kept")
        ->capture_default_str();
    command
        ->add_option("--validation-basis-points", flags.validationBasisPoints,
                     "Share of records for validation, in 1/10000 (100 = 1 %)")
        ->check(CLI::Range(0, 10000))
        ->capture_default_str();
    command->add_option("--tokens-per-shard", flags.tokensPerShard, "Tokens in each sealed shard")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    auto* vocab = command->add_option("--vocab", flags.vocab,
                                      "GPT-2 vocab.json: tokenize with GPT-2 BPE (needs --merges)");
    auto* merges = command->add_option("--merges", flags.merges, "GPT-2 merges.txt");
    vocab->needs(merges);
    merges->needs(vocab);
    command->add_option("--report", flags.reportFile,
                        "Write the import report (issues and PII locations, never values) as JSON");
    command
        ->add_option("--progress", flags.progress,
                     "auto (a bar on a terminal, else lines), bar, lines or none")
        ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
        ->capture_default_str();
    command->add_option("INPUT", flags.inputs, "Files or folders to import")->required();
}

ProgressReporter uploadReporter(const CommandRegistry& registry, bool bar)
{
    return ProgressReporter(registry.err(),
                            ProgressOptions{"upload", "files", bar, std::chrono::milliseconds(100),
                                            std::chrono::milliseconds(5000)});
}

std::function<void(std::uint64_t, std::uint64_t)>
progressFeed(std::optional<ProgressReporter>& progress, std::uint64_t items)
{
    return [&progress, items](std::uint64_t sent, std::uint64_t total) {
        if (!progress)
            return;
        const ProgressSample sample{sent, total, items};
        if (sent == total)
            progress->finish(sample);
        else
            progress->update(sample);
    };
}

bool progressAsBar(const CommandRegistry& registry, const ImportFlags& flags)
{
    return flags.progress == "bar"
           || (flags.progress == "auto" && &registry.err() == &std::cerr
               && ::isatty(STDERR_FILENO));
}

Result<void> writeImportReport(const std::string& path, const std::string& json)
{
    const std::string text = json + "\n";
    auto written = writeOutputFile(path, asBytes(text), "import report");
    if (!written)
        return Error(written.error().code(), "The dataset was imported but the report could not "
                                             "be written: "
                                                 + written.error().message());
    return success();
}

}  // namespace sealtrain::ctl
