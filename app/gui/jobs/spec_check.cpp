// A job spec checked against the JSON Schema (spec_check.h).
#include "spec_check.h"

#include "../common/resources.h"

#include "sealtrain/base/structured_text.h"

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <QFile>
#include <QRegularExpression>

#include <algorithm>
#include <string>
#include <vector>

namespace sealtrain::gui {
namespace {

using Json = nlohmann::json;

// What the control plane accepts by default (formats/job_spec.h's JobSpecLimits).
constexpr qsizetype kMaxSpecBytes = qsizetype{64} * 1024;

// valijson's context ("<root>", "[resources]", "[device]") as the field's path.
std::vector<std::string> fieldPath(const std::vector<std::string>& context)
{
    std::vector<std::string> path;
    for (const std::string& part : context) {
        if (part.size() >= 2 && part.front() == '[' && part.back() == ']')
            path.push_back(part.substr(1, part.size() - 2));
    }
    return path;
}

QString joined(const std::vector<std::string>& path)
{
    QStringList parts;
    for (const std::string& part : path)
        parts << QString::fromStdString(part);
    return parts.isEmpty() ? QStringLiteral("(top)") : parts.join('.');
}

// The schema of the field at `path` ($ref to $defs followed), or null when the schema does not
// describe it.
const Json* schemaAt(const Json& schema, const std::vector<std::string>& path)
{
    const Json* at = &schema;
    for (const std::string& part : path) {
        const auto properties = at->find("properties");
        if (properties == at->end() || !properties->contains(part))
            return nullptr;
        at = &(*properties)[part];
    }
    const auto ref = at->find("$ref");
    if (ref != at->end() && ref->is_string()) {
        const std::string pointer = ref->get<std::string>();
        if (pointer.rfind("#/", 0) == 0) {
            const Json::json_pointer target(pointer.substr(1));
            if (schema.contains(target))
                return &schema.at(target);
        }
    }
    return at;
}

QString typeName(const std::string& type)
{
    if (type == "integer")
        return QStringLiteral("an integer");
    if (type == "object")
        return QStringLiteral("a mapping of fields");
    if (type == "array")
        return QStringLiteral("a list");
    return QStringLiteral("a ") + QString::fromStdString(type);
}

// "100.000000" as "100", "1e-09" kept.
QString number(const QString& text)
{
    bool ok = false;
    const double value = text.toDouble(&ok);
    return ok ? QString::number(value, 'g', 12) : text;
}

// One valijson failure in words a spec's author acts on, using what the schema says of the field.
SpecProblem describe(const Json& schema, const std::vector<std::string>& path,
                     const std::string& description)
{
    static const QRegularExpression missing(
        QStringLiteral("^Missing required property '(.+)'\\.$"));
    static const QRegularExpression unknown(QStringLiteral(
        "^Object contains a property that could not be validated using 'properties' or "
        "'additionalProperties' constraints: '(.+)'\\.$"));
    static const QRegularExpression atMost(
        QStringLiteral("^Expected number less than or equal to (\\S+)"));
    static const QRegularExpression atLeast(
        QStringLiteral("^Expected number greater than or equal to (\\S+)"));
    const QString said = QString::fromStdString(description);
    const QString field = joined(path);
    const auto inner = [&](const QString& name) {
        return path.empty() ? name : field + '.' + name;
    };
    if (const auto match = missing.match(said); match.hasMatch())
        return {inner(match.captured(1)), QStringLiteral("is required")};
    if (const auto match = unknown.match(said); match.hasMatch())
        return {inner(match.captured(1)), QStringLiteral("is not a field of a version 1 job spec")};
    if (const auto match = atMost.match(said); match.hasMatch())
        return {field, QStringLiteral("must be at most ") + number(match.captured(1))};
    if (const auto match = atLeast.match(said); match.hasMatch())
        return {field, QStringLiteral("must be at least ") + number(match.captured(1))};
    const Json* at = schemaAt(schema, path);
    if (at != nullptr) {
        if (said.startsWith("Failed to match against any enum values") && at->contains("enum")) {
            QStringList values;
            for (const Json& value : at->at("enum"))
                values << QString::fromStdString(value.is_string() ? value.get<std::string>()
                                                                   : value.dump());
            return {field, QStringLiteral("must be one of: ") + values.join(", ")};
        }
        if (said.startsWith("Failed to match expected value set by 'const'")
            && at->contains("const"))
            return {field,
                    QStringLiteral("must be ") + QString::fromStdString(at->at("const").dump())};
        if (said.startsWith("Value type not permitted") && at->contains("type")
            && at->at("type").is_string())
            return {field,
                    QStringLiteral("must be ") + typeName(at->at("type").get<std::string>())};
        if (said.startsWith("Failed to match regex") && at->contains("pattern"))
            return {field, QStringLiteral("must match ")
                               + QString::fromStdString(at->at("pattern").get<std::string>())};
    }
    QString text = said;
    if (!text.isEmpty())
        text[0] = text[0].toLower();
    if (text.endsWith('.'))
        text.chop(1);
    return {field, text};
}

}  // namespace

struct SpecCheck::State {
    Json document;
    valijson::Schema schema;
};

SpecCheck::SpecCheck()
    : state_(std::make_unique<State>())
{
    ensureResources();
    QFile file(QStringLiteral(":/sealtrain/job-spec.schema.json"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("The job-spec schema is missing from the application's resources.");
    state_->document = Json::parse(file.readAll().toStdString());
    // The schema says draft 2020-12; what it uses (const, if/then, $defs reached by JSON pointer)
    // reads the same under draft 7, the newest valijson 1.0 knows.
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    const valijson::adapters::NlohmannJsonAdapter adapter(state_->document);
    parser.populateSchema(adapter, state_->schema);
}

SpecCheck::~SpecCheck() = default;

QList<SpecProblem> SpecCheck::check(const QString& text) const
{
    const QByteArray bytes = text.toUtf8();
    if (bytes.size() > kMaxSpecBytes)
        return {{{},
                 QObject::tr("The spec is larger than %1 bytes; a spec holds settings, not data.")
                     .arg(kMaxSpecBytes)}};
    auto json = parseStructuredText(std::string_view(bytes.constData(), std::size_t(bytes.size())),
                                    StructuredTextRules{});
    if (!json)
        return {{{}, QString::fromStdString(json.error().message())}};
    valijson::Validator validator;
    valijson::ValidationResults results;
    const valijson::adapters::NlohmannJsonAdapter adapter(*json);
    if (validator.validate(state_->schema, adapter, &results))
        return {};
    QList<SpecProblem> problems;
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
        // The wrappers ("failed to validate against schema associated with property 'x'") only
        // repeat a failure reported at the field itself.
        if (error.description.rfind("Failed to validate against", 0) == 0)
            continue;
        const SpecProblem problem =
            describe(state_->document, fieldPath(error.context), error.description);
        const bool seen = std::any_of(problems.begin(), problems.end(), [&](const SpecProblem& p) {
            return p.field == problem.field && p.text == problem.text;
        });
        if (!seen)
            problems << problem;
    }
    if (problems.isEmpty())
        problems << SpecProblem{QStringLiteral("(top)"), QObject::tr("does not match the schema")};
    return problems;
}

QString problemLine(const SpecProblem& problem)
{
    return problem.field.isEmpty() ? problem.text : problem.field + ' ' + problem.text;
}

}  // namespace sealtrain::gui
