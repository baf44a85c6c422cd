// The audit trail's health (trail_tab.h).
#include "trail_tab.h"

#include "common/colors.h"

#include "common/row_model.h"
#include "session/session.h"

#include <QDateTime>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace sealtrain::gui {
namespace {

// A value of the form: selectable, named for tests and screen readers.
QLabel* valueLabel(QWidget* parent, const char* name, const QString& accessible)
{
    auto* label = new QLabel(parent);
    label->setObjectName(name);
    label->setAccessibleName(accessible);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setWordWrap(true);
    return label;
}

}  // namespace

TrailTab::TrailTab(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , verdict_(valueLabel(this, "trailVerdict", tr("The audit trail's health")))
    , kind_(valueLabel(this, "trailKind", tr("Forward target")))
    , delivered_(valueLabel(this, "trailDelivered", tr("Entries delivered")))
    , behind_(valueLabel(this, "trailBehind", tr("Entries behind")))
    , head_(valueLabel(this, "trailHead", tr("Newest signed head delivered")))
    , lastDelivery_(valueLabel(this, "trailLastDelivery", tr("Last delivery")))
    , failing_(valueLabel(this, "trailFailing", tr("Refusals")))
    , witnesses_(valueLabel(this, "trailWitnesses", tr("Witnesses outside the data directory")))
    , check_(new QPushButton(tr("C&heck now"), this))
{
    setObjectName("trailTab");
    check_->setObjectName("trailCheckButton");
    auto* form = new QFormLayout;
    form->addRow(tr("Forwarded to:"), kind_);
    form->addRow(tr("Delivered:"), delivered_);
    form->addRow(tr("Behind:"), behind_);
    form->addRow(tr("Signed head at the target:"), head_);
    form->addRow(tr("Last delivery:"), lastDelivery_);
    form->addRow(tr("Refusals:"), failing_);
    form->addRow(tr("Witnesses:"), witnesses_);
    auto* about = new QLabel(
        tr("The log is kept by the control plane; a SIEM that receives each entry as it is "
           "written, and witnesses outside the data directory that keep every signed head, make "
           "a log cut short or rewritten there show (docs/operations/data-directory.md, "
           "docs/formats/audit-forward.md)."),
        this);
    about->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(verdict_);
    layout->addLayout(form);
    layout->addWidget(about);
    layout->addWidget(check_, 0, Qt::AlignLeft);
    layout->addStretch(1);
    connect(check_, &QPushButton::clicked, this, &TrailTab::reload);
}

bool TrailTab::allowedFor(const Session& session)
{
    return session.holds("audit.read");
}

void TrailTab::reload()
{
    session_.askServerInfo(this, [this](const Result<api::ServerInfoView>& info) {
        if (!info) {
            clear();
            verdict_->setText(tr("Unknown: %1").arg(sentence(info.error())));
            return;
        }
        show(*info, QDateTime::currentSecsSinceEpoch());
    });
}

void TrailTab::clear()
{
    for (QLabel* label :
         {verdict_, kind_, delivered_, behind_, head_, lastDelivery_, failing_, witnesses_})
        label->clear();
    verdict_->setStyleSheet({});
}

void TrailTab::show(const api::ServerInfoView& info, std::int64_t nowUnix)
{
    clear();
    witnesses_->setText(info.auditWitnessesOutside == 0
                            ? tr("none outside the data directory: a log rewritten there "
                                 "together with its witness would not show")
                            : tr("%n outside the data directory keep every signed head", nullptr,
                                 static_cast<int>(info.auditWitnessesOutside)));
    QString problem;
    if (!info.auditForwarding) {
        kind_->setText(tr("nothing: no SIEM receives the entries as they are written "
                          "(sealtrain-control --audit-forward)"));
        problem = tr("Not forwarded.");
    } else {
        const api::AuditForwardingView& f = *info.auditForwarding;
        kind_->setText(QString::fromStdString(f.kind));
        delivered_->setText(tr("%1 of %2 entries").arg(f.delivered).arg(f.logSize));
        behind_->setText(tr("%1 entries").arg(f.lag()));
        head_->setText(f.headSize == 0 ? tr("none yet") : tr("of %1 entries").arg(f.headSize));
        lastDelivery_->setText(f.lastDeliveryUnix == 0
                                   ? tr("never")
                                   : tr("%1 ago (%2)")
                                         .arg(durationText(nowUnix - f.lastDeliveryUnix),
                                              utcText(f.lastDeliveryUnix)));
        failing_->setText(
            f.failingSinceUnix == 0
                ? tr("none now (%1 since the control plane started)").arg(f.failures)
                : tr("the target refuses lines since %1 ago (%2), %3 failures; nothing is lost: "
                     "the entries wait in the signed log")
                      .arg(durationText(nowUnix - f.failingSinceUnix), utcText(f.failingSinceUnix))
                      .arg(f.failures));
        if (f.failingSinceUnix != 0)
            problem = tr("Forwarding fails.");
    }
    if (problem.isEmpty() && info.auditWitnessesOutside == 0)
        problem = tr("No witness outside the data directory.");
    verdict_->setText(problem.isEmpty() ? tr("Forwarded, and witnessed outside the data directory.")
                                        : problem);
    verdict_->setStyleSheet(problem.isEmpty() ? toneStyle(Tone::Good, true)
                                              : toneStyle(Tone::Bad, true));
}

}  // namespace sealtrain::gui
