// The audit table (audit_table_model.h).
#include "audit_table_model.h"

#include "common/colors.h"

#include "sealtrain/base/encoding.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>

namespace sealtrain::gui {

api::AuditEntryView entryView(const audit::Entry& entry)
{
    api::AuditEntryView view;
    view.sequence = entry.sequence;
    view.timeNs = entry.timeNs;
    view.actorKind = audit::actorKindName(entry.actor.kind);
    view.actor = entry.actor.id;
    view.actorSession = entry.actor.session;
    view.authMethod = entry.actor.authMethod;
    view.action = entry.action;
    view.targetKind = entry.target.kind;
    view.targetId = entry.target.id;
    view.outcome = audit::outcomeName(entry.outcome);
    view.reason = entry.reason;
    view.requestId = entry.requestId;
    view.approvalIds = entry.approvalIds;
    for (const audit::Detail& detail : entry.details) {
        if (detail.kind == audit::Detail::Kind::KeyedHash)
            view.details.push_back({detail.name, {}, toHex(detail.value)});
        else
            view.details.push_back(
                {detail.name, std::string(detail.value.begin(), detail.value.end()), {}});
    }
    return view;
}

AuditTableModel::AuditTableModel(QObject* parent)
    : RowModel({tr("#"), tr("Time (UTC)"), tr("Actor"), tr("Action"), tr("Target"), tr("Outcome"),
                tr("Reason")},
               parent)
{
}

QVariant AuditTableModel::cell(const api::AuditEntryView& entry, int column, int role) const
{
    if (role == Qt::ForegroundRole && column == Outcome && entry.outcome != "ok")
        return QBrush(toneColor(Tone::Bad));
    if (role == Qt::ToolTipRole)
        return detailsText(entry);
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case Sequence: return QVariant::fromValue<qulonglong>(entry.sequence);
    case Time:
        return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(entry.timeNs / 1'000'000),
                                              Qt::UTC)
            .toString("yyyy-MM-dd HH:mm:ss.zzz");
    case Actor:
        return QString::fromStdString(entry.actor)
               + (entry.actorKind == "user" ? QString()
                                            : " (" + QString::fromStdString(entry.actorKind) + ")");
    case Action: return QString::fromStdString(entry.action);
    case Target:
        return QString::fromStdString(entry.targetKind) + " "
               + QString::fromStdString(entry.targetId);
    case Outcome: return QString::fromStdString(entry.outcome);
    case Reason: return QString::fromStdString(entry.reason);
    default: return {};
    }
}

QString detailsText(const api::AuditEntryView& entry)
{
    QStringList parts;
    for (const api::AuditDetailView& detail : entry.details)
        parts << QString::fromStdString(detail.name) + "="
                     + (detail.keyedHash.empty()
                            ? QString::fromStdString(detail.text)
                            : "hmac:" + QString::fromStdString(detail.keyedHash.substr(0, 16)));
    return parts.join(' ');
}

}  // namespace sealtrain::gui
