// A dataset's lineage (dataset_lineage.h).
#include "dataset_lineage.h"

#include <QLocale>
#include <QObject>

#include <algorithm>

namespace sealtrain::gui {
namespace {

QString shortId(const std::string& id)
{
    return QString::fromStdString(id.size() > 15 ? id.substr(0, 15) + "…" : id);
}

}  // namespace

Lineage lineageOf(const std::vector<api::DatasetSummary>& datasets,
                  const std::vector<api::JobSummary>& jobs, const std::string& selected)
{
    Lineage lineage;
    const auto chosen =
        std::find_if(datasets.begin(), datasets.end(),
                     [&](const api::DatasetSummary& d) { return d.id == selected; });
    if (chosen == datasets.end())
        return lineage;
    std::vector<const api::DatasetSummary*> versions;
    for (const api::DatasetSummary& dataset : datasets)
        if (dataset.name == chosen->name)
            versions.push_back(&dataset);
    std::sort(versions.begin(), versions.end(),
              [](const auto* a, const auto* b) { return a->version < b->version; });
    const QLocale locale;
    int previous = -1;  // the previous version's node
    for (std::size_t column = 0; column < versions.size(); ++column) {
        const api::DatasetSummary& version = *versions[column];
        const int versionNode = static_cast<int>(lineage.nodes.size());
        lineage.nodes.push_back(
            {QStringLiteral("%1 v%2")
                 .arg(QString::fromStdString(version.name))
                 .arg(version.version),
             QStringLiteral("%1, %2 records, %3")
                 .arg(shortId(version.id), locale.toString(qulonglong(version.records)),
                      QString::fromStdString(version.classification)),
             static_cast<int>(column), 0, version.id == selected, /*main=*/true});
        if (previous >= 0)
            lineage.edges.push_back({previous, versionNode, QObject::tr("after")});
        previous = versionNode;
        int row = 1;
        for (const api::JobSummary& job : jobs) {
            if (job.datasetId != version.id)
                continue;
            lineage.edges.push_back(
                {versionNode, static_cast<int>(lineage.nodes.size()), QObject::tr("trained on")});
            lineage.nodes.push_back(
                {QStringLiteral("job %1 %2").arg(job.id).arg(QString::fromStdString(job.name)),
                 QStringLiteral("%1, by %2")
                     .arg(QString::fromStdString(job.state), QString::fromStdString(job.submitter)),
                 static_cast<int>(column), row++, false, false});
        }
    }
    return lineage;
}

}  // namespace sealtrain::gui
