// A model version's lineage (model_lineage.h).
#include "model_lineage.h"

#include <nlohmann/json.hpp>

#include <QByteArray>
#include <QObject>
#include <QStringList>

namespace sealtrain::gui {
namespace {

using nlohmann::json;

// `object[name]` as text (a number as its decimal form), empty when absent.
QString field(const json& object, const char* name)
{
    if (!object.is_object())
        return {};
    const auto found = object.find(name);
    if (found == object.end())
        return {};
    return QString::fromStdString(found->is_string() ? found->get<std::string>() : found->dump());
}

// The first 16 characters of a digest or id, and an ellipsis.
QString shortened(const QString& value)
{
    return value.size() > 16 ? value.left(16) + "…" : value;
}

// The in-toto statement inside a DSSE envelope carried as a JSON string (not verified: the
// command line's verify-lineage does that); null when it is not one.
json statement(const json& envelopeText)
{
    if (!envelopeText.is_string())
        return {};
    const auto envelope = json::parse(envelopeText.get<std::string>(), nullptr, false);
    if (!envelope.is_object() || !envelope.contains("payload") || !envelope["payload"].is_string())
        return {};
    const QByteArray payload =
        QByteArray::fromBase64(QByteArray::fromStdString(envelope["payload"].get<std::string>()));
    return json::parse(payload.toStdString(), nullptr, false);
}

json predicateOf(const json& envelopeText)
{
    const json parsed = statement(envelopeText);
    return parsed.is_object() ? parsed.value("predicate", json::object()) : json::object();
}

// The document's facts the graph and the text both show.
struct Facts {
    json document;
    json predicate;  // the registration's
    json job;
    json checkpoints;
    std::vector<json> promotions;  // their predicates
    QString label;                 // NAME@VERSION
};

std::optional<Facts> factsOf(const std::string& document)
{
    Facts facts;
    facts.document = json::parse(document, nullptr, false);
    if (!facts.document.is_object())
        return std::nullopt;
    facts.predicate = predicateOf(facts.document.value("registration", json()));
    facts.job = facts.predicate.value("job", json::object());
    facts.checkpoints = facts.predicate.value("checkpoints", json::array());
    if (!facts.checkpoints.is_array())
        facts.checkpoints = json::array();
    const json promotions = facts.document.value("promotions", json::array());
    if (promotions.is_array())
        for (const json& envelope : promotions)
            facts.promotions.push_back(predicateOf(envelope));
    facts.label = field(facts.document, "model") + "@" + field(facts.document, "version");
    return facts;
}

bool imported(const Facts& facts)
{
    return facts.document.value("source", "") == "import";
}

// Adds a node; its index.
int add(Lineage& lineage, LineageNode node)
{
    lineage.nodes.push_back(std::move(node));
    return static_cast<int>(lineage.nodes.size()) - 1;
}

}  // namespace

Lineage modelLineageOf(const std::string& document)
{
    const std::optional<Facts> facts = factsOf(document);
    Lineage lineage;
    lineage.flow = LineageFlow::Down;
    if (!facts)
        return lineage;
    const json& doc = facts->document;
    int row = 0;    // one stage a row, top to bottom
    int last = -1;  // the node the version came from
    if (imported(*facts)) {
        last = add(lineage,
                   {QObject::tr("imported GPT-2 folder"),
                    QObject::tr("model.safetensors %1")
                        .arg(shortened(field(facts->predicate.value("sources", json::object()),
                                             "model.safetensors"))),
                    0, row++, false, false});
    } else {
        const int dataset = add(lineage, {QObject::tr("dataset"), shortened(field(doc, "dataset")),
                                          0, row, false, false});
        int base = -1;
        if (const json named = doc.value("base", json()); named.is_object())
            base = add(lineage, {QObject::tr("base model %1@%2")
                                     .arg(field(named, "model"), field(named, "version")),
                                 QObject::tr("%1, %2").arg(shortened(field(named, "digest")),
                                                           field(named, "source") == "import"
                                                               ? QObject::tr("imported")
                                                               : QObject::tr("trained here")),
                                 1, row, false, false});
        ++row;
        const int job =
            add(lineage,
                {QObject::tr("job %1 '%2'").arg(field(facts->job, "id"), field(facts->job, "name")),
                 QObject::tr("by %1, approved by %2")
                     .arg(field(facts->job, "submitter"), field(facts->job, "approver")),
                 0, row++, false, false});
        lineage.edges.push_back({dataset, job, QObject::tr("trained on")});
        if (base >= 0)
            lineage.edges.push_back({base, job, QObject::tr("started from")});
        last = job;
        const std::size_t count = facts->checkpoints.size();
        const std::size_t ends = 3;  // shown at each end of a long chain
        for (std::size_t index = 0; index < count; ++index) {
            const bool collapsed =
                count > kLineageCheckpointsShown && index >= ends && index < count - ends;
            if (collapsed && index != ends)
                continue;
            const json& link = facts->checkpoints[index];
            const int node =
                collapsed
                    ? add(lineage, {QObject::tr("… %1 more checkpoints").arg(count - 2 * ends),
                                    QObject::tr("steps %1 to %2")
                                        .arg(field(link, "step"),
                                             field(facts->checkpoints[count - ends - 1], "step")),
                                    0, row++, false, false})
                    : add(lineage, {QObject::tr("checkpoint at step %1").arg(field(link, "step")),
                                    QObject::tr("%1, signed by %2")
                                        .arg(shortened(field(link, "plaintext_sha256")),
                                             field(link, "worker")),
                                    0, row++, false, false});
            lineage.edges.push_back(
                {last, node, last == job ? QObject::tr("written by") : QObject::tr("after")});
            last = node;
        }
    }
    const int version =
        add(lineage,
            {facts->label,
             QObject::tr("%1, %2 by %3")
                 .arg(shortened(field(doc, "digest")),
                      imported(*facts) ? QObject::tr("imported") : QObject::tr("registered"),
                      field(facts->predicate, imported(*facts) ? "imported_by" : "registered_by")),
             0, row++, true, true});
    lineage.edges.push_back(
        {last, version,
         imported(*facts) ? QObject::tr("imported from") : QObject::tr("registered from")});
    int column = 0;
    for (const json& promotion : facts->promotions) {
        const int node = add(
            lineage, {QObject::tr("alias %1").arg(field(promotion, "alias")),
                      QObject::tr("asked by %1, approved by %2")
                          .arg(field(promotion, "requested_by"), field(promotion, "approved_by")),
                      column++, row, false, false});
        lineage.edges.push_back({version, node, QObject::tr("names")});
    }
    return lineage;
}

QString lineageGraph(const std::string& document)
{
    const std::optional<Facts> facts = factsOf(document);
    if (!facts)
        return QObject::tr("The lineage document could not be read.");
    const json& doc = facts->document;
    QStringList lines;
    if (imported(*facts)) {
        lines.append(
            QObject::tr("imported GPT-2 folder (model.safetensors %1…)")
                .arg(field(facts->predicate.value("sources", json::object()), "model.safetensors")
                         .left(16)));
        lines.append(
            QObject::tr("  └ %1 (%2), imported by %3")
                .arg(facts->label, field(doc, "digest"), field(facts->predicate, "imported_by")));
        return lines.join('\n');
    }
    if (const json base = doc.value("base", json()); base.is_object())
        lines.append(QObject::tr("base model %1@%2 (%3)")
                         .arg(field(base, "model"), field(base, "version"), field(base, "digest")));
    lines.append(QObject::tr("dataset %1").arg(field(doc, "dataset")));
    lines.append(QObject::tr("  └ job %1 '%2' (spec %3), submitted by %4, approved by %5")
                     .arg(field(facts->job, "id"), field(facts->job, "name"),
                          field(facts->job, "spec_sha256").left(16) + "…",
                          field(facts->job, "submitter"), field(facts->job, "approver")));
    QString indent = "      ";
    for (const json& link : facts->checkpoints) {
        lines.append(QObject::tr("%1└ checkpoint at step %2 (%3…), signed by %4")
                         .arg(indent, field(link, "step"), field(link, "plaintext_sha256").left(16),
                              field(link, "worker")));
        indent += "  ";
    }
    lines.append(QObject::tr("%1└ %2 (%3), registered by %4")
                     .arg(indent, facts->label, field(doc, "digest"),
                          field(facts->predicate, "registered_by")));
    indent += "  ";
    for (const json& promotion : facts->promotions)
        lines.append(QObject::tr("%1└ %2, asked by %3, approved by %4")
                         .arg(indent, field(promotion, "alias"), field(promotion, "requested_by"),
                              field(promotion, "approved_by")));
    return lines.join('\n');
}

}  // namespace sealtrain::gui
