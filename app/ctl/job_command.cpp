// `sealtrainctl job validate`: checks a job spec offline, as the control plane will
// (docs/formats/job-spec.md), and prints its canonical form's SHA-256, the hash an approval
// binds to. The job commands that go through the control plane come with the Jobs API.
#include "commands.h"
#include "ctl.h"
#include "input_file.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/job_spec.h"

#include <fmt/format.h>

#include <memory>
#include <string>

namespace sealtrain::ctl {
namespace {

struct ValidateOptions {
    std::string file;
    bool canonical = false;
};

int validate(const CommandRegistry& registry, const ValidateOptions& options)
{
    auto text = readInputFile(options.file, "job spec");
    if (!text)
        return registry.fail(text.error());
    auto spec = core::parseJobSpec(*text);
    if (!spec)
        return registry.fail(spec.error());
    if (options.canonical) {
        registry.out() << core::canonicalJobSpec(*spec) << '\n';
        return kExitOk;
    }
    registry.out() << fmt::format("{}: job '{}' in project '{}' on dataset '{}', pool '{}'\n"
                                  "sha256 {}\n",
                                  options.file, spec->name, spec->project, spec->dataset,
                                  spec->resources.pool, toHex(core::jobSpecHash(*spec)));
    return kExitOk;
}

}  // namespace

void registerJobCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand("job", "Training jobs: specs (docs/formats/job-spec.md)");
    group->require_subcommand(1);
    auto options = std::make_shared<ValidateOptions>();
    auto* command = group->add_subcommand(
        "validate", "Check a job spec (JSON or YAML) as the control plane will, offline, and "
                    "print the SHA-256 an approval binds to");
    command->add_option("FILE", options->file, "The spec")->required();
    command->add_flag("--canonical", options->canonical,
                      "Print the canonical form (every default filled in) instead");
    registry.onRun(command, [options, &registry] { return validate(registry, *options); });
}

}  // namespace sealtrain::ctl
