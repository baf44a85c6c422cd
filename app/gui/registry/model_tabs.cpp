// The models screen's tabs (model_tabs.h).
#include "model_tabs.h"

#include "../common/row_model.h"
#include "../session/session.h"
#include "common/path_field.h"
#include "model_lineage.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <filesystem>

namespace sealtrain::gui {
namespace {

QString text(const std::string& value)
{
    return QString::fromStdString(value);
}

QTableWidget* namedTable(QWidget* parent, const char* objectName, const QString& accessibleName,
                         const QStringList& headers)
{
    auto* table = new QTableWidget(parent);
    table->setObjectName(objectName);
    table->setAccessibleName(accessibleName);
    table->setColumnCount(static_cast<int>(headers.size()));
    table->setHorizontalHeaderLabels(headers);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->horizontalHeader()->setStretchLastSection(true);
    table->verticalHeader()->hide();
    return table;
}

void fillRow(QTableWidget& table, int row, const QStringList& cells)
{
    for (int column = 0; column < cells.size(); ++column)
        table.setItem(row, column, new QTableWidgetItem(cells[column]));
}

QPushButton* namedButton(QWidget* parent, const QString& label, const char* objectName,
                         const QString& accessibleName)
{
    auto* button = new QPushButton(label, parent);
    button->setObjectName(objectName);
    button->setAccessibleName(accessibleName);
    return button;
}

// The item of `items` chosen in `table`, or none.
template <typename Item>
const Item* chosenIn(const QTableWidget& table, const std::vector<Item>* items)
{
    const QList<QTableWidgetItem*> selected = table.selectedItems();
    const int row = selected.isEmpty() ? -1 : selected.front()->row();
    return items != nullptr && row >= 0 && row < static_cast<int>(items->size())
               ? &(*items)[static_cast<std::size_t>(row)]
               : nullptr;
}

// Approves `id` for `digest` (the one shown, which this person reviewed) or rejects it.
void decideOn(const ModelCalls& calls, bool promotion, bool approve, std::int64_t id,
              const std::string& digest)
{
    const std::string reason = calls.reason();
    const QString what = promotion ? QObject::tr("promotion") : QObject::tr("export");
    calls.act(
        approve ? QObject::tr("Approved %1 %2 for %3.").arg(what).arg(id).arg(text(digest))
                : QObject::tr("Rejected %1 %2.").arg(what).arg(id),
        [promotion, approve, id, digest, reason](api::ControlClient& client) -> Result<QString> {
            Result<void> done = success();
            if (promotion) {
                auto decided = approve ? client.registry().approvePromotion(id, digest)
                                       : client.registry().rejectPromotion(id, reason);
                if (!decided)
                    done = decided.error();
            } else {
                auto decided = approve ? client.registry().approveExport(id, digest)
                                       : client.registry().rejectExport(id, reason);
                if (!decided)
                    done = decided.error();
            }
            return done ? Result<QString>(QString()) : Result<QString>(done.error());
        });
}

}  // namespace

VersionsTab::VersionsTab(const ModelCalls& calls, QWidget* parent)
    : QWidget(parent)
    , calls_(calls)
    , table_(namedTable(this, "modelVersions", tr("The model's versions"),
                        {tr("Version"), tr("Aliases"), tr("Job"), tr("Step"), tr("Worker"),
                         tr("Registered by"), tr("Digest")}))
    , alias_(
          namedField(this, "promoteAlias", tr("Alias to promote the version to"), tr("production")))
    , promote_(namedButton(this, tr("&Promote…"), "promoteButton",
                           tr("Ask that the alias name the chosen version")))
    , requestExport_(namedButton(this, tr("Ask to e&xport"), "exportRequestButton",
                                 tr("Ask that the chosen version be exported")))
{
    alias_->setText("production");  // not translated: the alias most teams promote to
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(table_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(alias_);
    buttons->addWidget(promote_);
    buttons->addStretch(1);
    buttons->addWidget(requestExport_);
    layout->addLayout(buttons);
    connect(table_, &QTableWidget::itemSelectionChanged, this, &VersionsTab::chosenChanged);
    connect(promote_, &QPushButton::clicked, this, [this] {
        const api::ModelVersionView* version = chosen();
        if (version == nullptr)
            return;
        const std::string name = version->name;
        const std::int64_t number = version->version;
        const std::string alias = alias_->text().trimmed().toStdString();
        const std::string reason = calls_.reason();
        calls_.act(tr("Asked that %1 name %2@%3; a second person approves it.")
                       .arg(text(alias), text(name))
                       .arg(number),
                   [name, number, alias, reason](api::ControlClient& client) -> Result<QString> {
                       auto asked = client.registry().requestPromotion(name, number, alias, reason);
                       return asked ? Result<QString>(QString()) : Result<QString>(asked.error());
                   });
    });
    connect(requestExport_, &QPushButton::clicked, this, [this] {
        const api::ModelVersionView* version = chosen();
        if (version == nullptr)
            return;
        const std::string reference = version->name + "@" + std::to_string(version->version);
        const std::string reason = calls_.reason();
        calls_.act(
            tr("Asked that %1 be exported; a second person approves it.").arg(text(reference)),
            [reference, reason](api::ControlClient& client) -> Result<QString> {
                auto asked = client.registry().requestExport(reference, reason);
                return asked ? Result<QString>(QString()) : Result<QString>(asked.error());
            });
    });
}

void VersionsTab::show(const api::ModelView* model)
{
    model_ = model;
    const std::size_t count = model == nullptr ? 0 : model->versions.size();
    table_->setRowCount(static_cast<int>(count));
    for (std::size_t i = 0; i < count; ++i) {
        const api::ModelVersionView& version = model->versions[i];
        QStringList aliases;
        for (const std::string& alias : version.aliases)
            aliases.append(text(alias));
        // An imported base model has no job; a fine-tuned version names the one it started from.
        QString job = version.source == "import" ? tr("imported") : QString::number(version.job);
        if (!version.base.empty())
            job += tr(" (from %1)").arg(text(version.base));
        fillRow(*table_, static_cast<int>(i),
                {QString::number(version.version), aliases.join(", "), job,
                 version.source == "import" ? QString("-") : QString::number(version.step),
                 text(version.worker), text(version.registeredBy), text(version.digest)});
    }
    table_->resizeColumnsToContents();
    if (count > 0)
        table_->selectRow(static_cast<int>(count) - 1);
}

const api::ModelVersionView* VersionsTab::chosen() const
{
    return chosenIn(*table_, model_ == nullptr ? nullptr : &model_->versions);
}

void VersionsTab::updateButtons(const ModelViewer& viewer)
{
    const bool version = chosen() != nullptr;
    promote_->setVisible(viewer.mayRegister);
    requestExport_->setVisible(viewer.mayRegister);
    alias_->setVisible(viewer.mayRegister);
    promote_->setEnabled(version);
    requestExport_->setEnabled(version);
}

PromotionsTab::PromotionsTab(const ModelCalls& calls, QWidget* parent)
    : QWidget(parent)
    , calls_(calls)
    , table_(namedTable(this, "modelPromotions", tr("The model's promotions"),
                        {tr("No."), tr("Version"), tr("Alias"), tr("State"), tr("Asked by"),
                         tr("Decided by"), tr("Reason")}))
    , approve_(namedButton(this, tr("&Approve"), "approvePromotionButton",
                           tr("Approve the chosen promotion for its digest")))
    , reject_(namedButton(this, tr("&Reject"), "rejectPromotionButton",
                          tr("Reject the chosen promotion")))
{
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(table_);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(approve_);
    buttons->addWidget(reject_);
    layout->addLayout(buttons);
    connect(table_, &QTableWidget::itemSelectionChanged, this, &PromotionsTab::chosenChanged);
    connect(approve_, &QPushButton::clicked, this, [this] { decide(true); });
    connect(reject_, &QPushButton::clicked, this, [this] { decide(false); });
}

void PromotionsTab::show(const api::ModelView* model)
{
    model_ = model;
    const std::size_t count = model == nullptr ? 0 : model->promotions.size();
    table_->setRowCount(static_cast<int>(count));
    for (std::size_t i = 0; i < count; ++i) {
        const api::PromotionView& promotion = model->promotions[i];
        fillRow(*table_, static_cast<int>(i),
                {QString::number(promotion.id), QString::number(promotion.version),
                 text(promotion.alias), text(promotion.state), text(promotion.requestedBy),
                 text(promotion.decidedBy), text(promotion.reason)});
    }
    table_->resizeColumnsToContents();
}

const api::PromotionView* PromotionsTab::chosen() const
{
    return chosenIn(*table_, model_ == nullptr ? nullptr : &model_->promotions);
}

void PromotionsTab::updateButtons(const ModelViewer& viewer)
{
    // Nobody decides on their own request: the buttons are not there for it.
    const api::PromotionView* promotion = chosen();
    const bool decide = viewer.mayApprove && promotion != nullptr && promotion->state == "pending"
                        && promotion->requestedBy != viewer.user;
    approve_->setVisible(decide);
    reject_->setVisible(decide);
}

void PromotionsTab::decide(bool approve)
{
    if (const api::PromotionView* promotion = chosen())
        decideOn(calls_, true, approve, promotion->id, promotion->digest);
}

ExportsTab::ExportsTab(const ModelCalls& calls, QWidget* parent)
    : QWidget(parent)
    , calls_(calls)
    , table_(namedTable(this, "modelExports", tr("The model's exports"),
                        {tr("No."), tr("Version"), tr("State"), tr("Asked by"), tr("Decided by"),
                         tr("Reason"), tr("Downloads"), tr("Folder digest")}))
    , folder_(namedField(this, "exportFolder", tr("New folder to receive the export in"),
                         tr("/path/to/new-folder")))
    , download_(namedButton(this, tr("&Receive"), "downloadExportButton",
                            tr("Receive the approved export into the new folder")))
    , approve_(namedButton(this, tr("A&pprove"), "approveExportButton",
                           tr("Approve the chosen export for its digest")))
    , reject_(
          namedButton(this, tr("Re&ject"), "rejectExportButton", tr("Reject the chosen export")))
{
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(table_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(
        withBrowse(folder_, PathKind::SaveFile, tr("A new folder to receive the export in")), 1);
    buttons->addWidget(download_);
    buttons->addStretch(0);  // the decisions stay at the right while no folder is asked for
    buttons->addWidget(approve_);
    buttons->addWidget(reject_);
    layout->addLayout(buttons);
    connect(table_, &QTableWidget::itemSelectionChanged, this, &ExportsTab::chosenChanged);
    connect(approve_, &QPushButton::clicked, this, [this] { decide(true); });
    connect(reject_, &QPushButton::clicked, this, [this] { decide(false); });
    connect(download_, &QPushButton::clicked, this, &ExportsTab::receive);
}

void ExportsTab::show(const api::ModelView* model)
{
    model_ = model;
    const std::size_t count = model == nullptr ? 0 : model->exports.size();
    table_->setRowCount(static_cast<int>(count));
    for (std::size_t i = 0; i < count; ++i) {
        const api::ModelExportView& exported = model->exports[i];
        fillRow(*table_, static_cast<int>(i),
                {QString::number(exported.id), QString::number(exported.version),
                 text(exported.state), text(exported.requestedBy), text(exported.decidedBy),
                 text(exported.reason), QString::number(exported.downloads),
                 text(exported.folderDigest)});
    }
    table_->resizeColumnsToContents();
}

const api::ModelExportView* ExportsTab::chosen() const
{
    return chosenIn(*table_, model_ == nullptr ? nullptr : &model_->exports);
}

void ExportsTab::updateButtons(const ModelViewer& viewer)
{
    const api::ModelExportView* exported = chosen();
    const bool decide = viewer.mayApprove && exported != nullptr && exported->state == "pending"
                        && exported->requestedBy != viewer.user;
    approve_->setVisible(decide);
    reject_->setVisible(decide);
    const bool receive = exported != nullptr && exported->state == "approved"
                         && exported->requestedBy == viewer.user;
    download_->setVisible(receive);
    folder_->parentWidget()->setVisible(receive);  // the field and its Browse button
}

void ExportsTab::decide(bool approve)
{
    if (const api::ModelExportView* exported = chosen())
        decideOn(calls_, false, approve, exported->id, exported->digest);
}

void ExportsTab::receive()
{
    const api::ModelExportView* exported = chosen();
    if (exported == nullptr)
        return;
    if (pathOrAsk(folder_, PathKind::SaveFile, tr("A new folder to receive the export in"))
            .isEmpty()) {
        calls_.error(tr("Name a new folder to receive the export in."));
        return;
    }
    const std::int64_t id = exported->id;
    const std::filesystem::path folder = folder_->text().trimmed().toStdString();
    calls_.act(tr("Received export %1 into %2").arg(id).arg(folder_->text().trimmed()),
               [id, folder](api::ControlClient& client) -> Result<QString> {
                   auto digest = client.registry().downloadExport(id, folder);
                   if (!digest)
                       return digest.error();
                   return QObject::tr(" (digest %1); check it with model_signing verify "
                                      "certificate.")
                       .arg(text(*digest));
               });
}

LineageTab::LineageTab(QWidget* parent)
    : QWidget(parent)
    , text_(new QPlainTextEdit(this))
    , graph_(new LineageView(tr("Choose a version to see its lineage."), this))
{
    text_->setObjectName("modelLineage");
    text_->setReadOnly(true);
    text_->setTabChangesFocus(true);
    text_->setLineWrapMode(QPlainTextEdit::NoWrap);
    text_->setAccessibleName(tr("The chosen version's lineage, with full digests"));
    graph_->setObjectName("modelLineageGraph");
    graph_->setAccessibleName(tr("The chosen version's lineage, drawn"));
    auto* graphScroll = new QScrollArea(this);
    graphScroll->setWidget(graph_);
    graphScroll->setWidgetResizable(true);
    graphScroll->setFrameShape(QFrame::NoFrame);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(graphScroll);
    split->addWidget(text_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({450, 150});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);
}

void LineageTab::show(const std::optional<Result<std::string>>& document)
{
    if (!document || !*document) {
        if (document)
            text_->setPlainText(sentence(document->error()));
        else
            text_->clear();
        graph_->setLineage({});
        return;
    }
    text_->setPlainText(lineageGraph(**document));
    graph_->setLineage(modelLineageOf(**document));
}

}  // namespace sealtrain::gui
