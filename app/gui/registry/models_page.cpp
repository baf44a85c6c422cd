// The models screen (models_page.h).
#include "models_page.h"

#include "../common/background.h"
#include "../common/row_model.h"
#include "../session/session.h"
#include "model_lineage.h"
#include "model_table_model.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include <utility>

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

int chosenRow(const QTableWidget& table)
{
    const QList<QTableWidgetItem*> items = table.selectedItems();
    return items.isEmpty() ? -1 : items.front()->row();
}

}  // namespace

// Over 100 lines: every widget of the page made, named and laid out where it shows, read
// top to bottom as the screen.
ModelsPage::ModelsPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , model_(new ModelTableModel(this))
    , table_(new QTableView(this))
    , title_(new QLabel(this))
    , error_(new QLabel(this))
    , tabs_(new QTabWidget(this))
    , versions_(namedTable(this, "modelVersions", tr("The model's versions"),
                           {tr("Version"), tr("Aliases"), tr("Job"), tr("Step"), tr("Worker"),
                            tr("Registered by"), tr("Digest")}))
    , promotions_(namedTable(this, "modelPromotions", tr("The model's promotions"),
                             {tr("No."), tr("Version"), tr("Alias"), tr("State"), tr("Asked by"),
                              tr("Decided by"), tr("Reason")}))
    , exports_(namedTable(this, "modelExports", tr("The model's exports"),
                          {tr("No."), tr("Version"), tr("State"), tr("Asked by"), tr("Decided by"),
                           tr("Reason"), tr("Downloads"), tr("Folder digest")}))
    , lineage_(new QPlainTextEdit(this))
    , graph_(new LineageView(tr("Choose a version to see its lineage."), this))
    , alias_(
          namedField(this, "promoteAlias", tr("Alias to promote the version to"), tr("production")))
    , reason_(namedField(this, "modelReason", tr("Reason for a request or a rejection"),
                         tr("Reason (for a request or a rejection)")))
    , folder_(namedField(this, "exportFolder", tr("New folder to receive the export in"),
                         tr("/path/to/new-folder")))
    , promote_(namedButton(this, tr("&Promote…"), "promoteButton",
                           tr("Ask that the alias name the chosen version")))
    , requestExport_(namedButton(this, tr("Ask to e&xport"), "exportRequestButton",
                                 tr("Ask that the chosen version be exported")))
    , approvePromotion_(namedButton(this, tr("&Approve"), "approvePromotionButton",
                                    tr("Approve the chosen promotion for its digest")))
    , rejectPromotion_(namedButton(this, tr("&Reject"), "rejectPromotionButton",
                                   tr("Reject the chosen promotion")))
    , approveExport_(namedButton(this, tr("A&pprove"), "approveExportButton",
                                 tr("Approve the chosen export for its digest")))
    , rejectExport_(
          namedButton(this, tr("Re&ject"), "rejectExportButton", tr("Reject the chosen export")))
    , download_(namedButton(this, tr("&Receive"), "downloadExportButton",
                            tr("Receive the approved export into the new folder")))
{
    setObjectName("modelsPage");
    setUpTable(*table_, *model_, "modelsTable", tr("Models"));
    title_->setObjectName("modelsTitle");
    title_->setWordWrap(true);
    title_->setText(tr("Choose a model to see its versions, promotions, exports and lineage."));
    error_->setObjectName("modelsError");
    error_->setWordWrap(true);
    error_->setStyleSheet("color: #b00020;");
    lineage_->setObjectName("modelLineage");
    lineage_->setReadOnly(true);
    lineage_->setTabChangesFocus(true);
    lineage_->setLineWrapMode(QPlainTextEdit::NoWrap);
    lineage_->setAccessibleName(tr("The chosen version's lineage, with full digests"));
    graph_->setObjectName("modelLineageGraph");
    graph_->setAccessibleName(tr("The chosen version's lineage, drawn"));
    alias_->setText("production");
    tabs_->setObjectName("modelTabs");

    auto* versionsTab = new QWidget(this);
    auto* versionsLayout = new QVBoxLayout(versionsTab);
    versionsLayout->addWidget(versions_);
    auto* versionButtons = new QHBoxLayout;
    versionButtons->addWidget(alias_);
    versionButtons->addWidget(promote_);
    versionButtons->addStretch(1);
    versionButtons->addWidget(requestExport_);
    versionsLayout->addLayout(versionButtons);
    auto* promotionsTab = new QWidget(this);
    auto* promotionsLayout = new QVBoxLayout(promotionsTab);
    promotionsLayout->addWidget(promotions_);
    auto* promotionButtons = new QHBoxLayout;
    promotionButtons->addStretch(1);
    promotionButtons->addWidget(approvePromotion_);
    promotionButtons->addWidget(rejectPromotion_);
    promotionsLayout->addLayout(promotionButtons);
    auto* exportsTab = new QWidget(this);
    auto* exportsLayout = new QVBoxLayout(exportsTab);
    exportsLayout->addWidget(exports_);
    auto* exportButtons = new QHBoxLayout;
    exportButtons->addWidget(folder_, 1);
    exportButtons->addWidget(download_);
    exportButtons->addStretch(0);  // the decisions stay at the right while no folder is asked for
    exportButtons->addWidget(approveExport_);
    exportButtons->addWidget(rejectExport_);
    exportsLayout->addLayout(exportButtons);
    tabs_->addTab(versionsTab, tr("Versions"));
    tabs_->addTab(promotionsTab, tr("Promotions"));
    tabs_->addTab(exportsTab, tr("Exports"));
    auto* graphScroll = new QScrollArea(this);
    graphScroll->setWidget(graph_);
    graphScroll->setWidgetResizable(true);
    graphScroll->setFrameShape(QFrame::NoFrame);
    auto* lineageTab = new QSplitter(Qt::Vertical, this);
    lineageTab->addWidget(graphScroll);
    lineageTab->addWidget(lineage_);
    lineageTab->setStretchFactor(0, 3);
    lineageTab->setStretchFactor(1, 1);
    lineageTab->setSizes({450, 150});
    tabs_->addTab(lineageTab, tr("Lineage"));

    auto* details = new QWidget(this);
    auto* detailsLayout = new QVBoxLayout(details);
    detailsLayout->addWidget(title_);
    detailsLayout->addWidget(error_);
    detailsLayout->addWidget(tabs_, 1);
    detailsLayout->addWidget(reason_);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(table_);
    split->addWidget(details);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    split->setSizes({330, 670});
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { showChosen(); });
    for (QTableWidget* table : {versions_, promotions_, exports_})
        connect(table, &QTableWidget::itemSelectionChanged, this, [this] { updateButtons(); });
    connect(versions_, &QTableWidget::itemSelectionChanged, this, [this] { showLineage(); });
    connect(promote_, &QPushButton::clicked, this, [this] {
        const api::ModelVersionView* version = chosenVersion();
        if (version == nullptr)
            return;
        const std::string name = version->name;
        const std::int64_t number = version->version;
        const std::string alias = alias_->text().trimmed().toStdString();
        const std::string reason = reason_->text().toStdString();
        act(tr("Asked that %1 name %2@%3; a second person approves it.")
                .arg(text(alias), text(name))
                .arg(number),
            [name, number, alias, reason](api::ControlClient& client) -> Result<QString> {
                auto asked = client.requestPromotion(name, number, alias, reason);
                return asked ? Result<QString>(QString()) : Result<QString>(asked.error());
            });
    });
    connect(requestExport_, &QPushButton::clicked, this, [this] {
        const api::ModelVersionView* version = chosenVersion();
        if (version == nullptr)
            return;
        const std::string reference = version->name + "@" + std::to_string(version->version);
        const std::string reason = reason_->text().toStdString();
        act(tr("Asked that %1 be exported; a second person approves it.").arg(text(reference)),
            [reference, reason](api::ControlClient& client) -> Result<QString> {
                auto asked = client.requestExport(reference, reason);
                return asked ? Result<QString>(QString()) : Result<QString>(asked.error());
            });
    });
    const auto decide = [this](bool promotion, bool approve) {
        const std::string reason = reason_->text().toStdString();
        std::int64_t id = 0;
        std::string digest;
        if (promotion && chosenPromotion() != nullptr) {
            id = chosenPromotion()->id;
            digest = chosenPromotion()->digest;
        } else if (!promotion && chosenExport() != nullptr) {
            id = chosenExport()->id;
            digest = chosenExport()->digest;
        }
        if (id == 0)
            return;
        // The digest approved is the one shown in the table, the one this person reviewed.
        act(approve ? tr("Approved %1 %2 for %3.")
                          .arg(promotion ? tr("promotion") : tr("export"))
                          .arg(id)
                          .arg(text(digest))
                    : tr("Rejected %1 %2.").arg(promotion ? tr("promotion") : tr("export")).arg(id),
            [promotion, approve, id, digest,
             reason](api::ControlClient& client) -> Result<QString> {
                Result<void> done = success();
                if (promotion) {
                    auto decided = approve ? client.approvePromotion(id, digest)
                                           : client.rejectPromotion(id, reason);
                    if (!decided)
                        done = decided.error();
                } else {
                    auto decided = approve ? client.approveExport(id, digest)
                                           : client.rejectExport(id, reason);
                    if (!decided)
                        done = decided.error();
                }
                return done ? Result<QString>(QString()) : Result<QString>(done.error());
            });
    };
    connect(approvePromotion_, &QPushButton::clicked, this, [decide] { decide(true, true); });
    connect(rejectPromotion_, &QPushButton::clicked, this, [decide] { decide(true, false); });
    connect(approveExport_, &QPushButton::clicked, this, [decide] { decide(false, true); });
    connect(rejectExport_, &QPushButton::clicked, this, [decide] { decide(false, false); });
    connect(download_, &QPushButton::clicked, this, [this] {
        const api::ModelExportView* exported = chosenExport();
        if (exported == nullptr)
            return;
        if (folder_->text().trimmed().isEmpty()) {
            showError(tr("Name a new folder to receive the export in."));
            return;
        }
        const std::int64_t id = exported->id;
        const std::filesystem::path folder = folder_->text().trimmed().toStdString();
        act(tr("Received export %1 into %2").arg(id).arg(folder_->text().trimmed()),
            [id, folder](api::ControlClient& client) -> Result<QString> {
                auto digest = client.downloadExport(id, folder);
                if (!digest)
                    return digest.error();
                return QObject::tr(" (digest %1); check it with model_signing verify certificate.")
                    .arg(text(*digest));
            });
    });
    updateButtons();
}

void ModelsPage::reload()
{
    auto client = session_.client();
    if (!client)
        return;
    runInBackground(
        this, [client] { return client->listModels(); },
        [this](Result<std::vector<api::ModelSummaryView>> models) {
            if (!models) {
                showError(sentence(models.error()));
                return;
            }
            const std::string kept = shown_ ? shown_->name : std::string();
            const QSignalBlocker quiet(table_->selectionModel());
            model_->setRows(std::move(*models));
            table_->resizeColumnsToContents();
            for (int row = 0; row < model_->rowCount(); ++row)
                if (model_->rowAt(row)->name == kept)
                    table_->selectRow(row);
        });
}

void ModelsPage::clear()
{
    ++asked_;
    const QSignalBlocker quiet(table_->selectionModel());
    model_->setRows({});
    shown_.reset();
    error_->clear();
    for (QTableWidget* table : {versions_, promotions_, exports_})
        table->setRowCount(0);
    lineage_->clear();
    graph_->setLineage({});
    title_->setText(tr("Choose a model to see its versions, promotions, exports and lineage."));
    updateButtons();
}

bool ModelsPage::choose(const std::string& name)
{
    for (int row = 0; row < model_->rowCount(); ++row) {
        if (model_->rowAt(row)->name != name)
            continue;
        table_->clearSelection();
        table_->selectRow(row);
        return true;
    }
    return false;
}

void ModelsPage::showChosen()
{
    const QModelIndexList rows = table_->selectionModel()->selectedRows();
    auto client = session_.client();
    if (rows.isEmpty() || !client)
        return;
    const api::ModelSummaryView* chosen = model_->rowAt(rows.front().row());
    if (chosen == nullptr)
        return;
    const std::string name = chosen->name;
    const int asked = ++asked_;
    error_->clear();
    title_->setText(tr("Reading %1…").arg(text(name)));
    runInBackground(
        this, [client, name] { return client->showModel(name); },
        [this, asked](Result<api::ModelView> model) {
            if (asked != asked_)
                return;
            if (!model) {
                showError(sentence(model.error()));
                return;
            }
            show(std::move(*model));
            emit modelShown();
        });
}

void ModelsPage::show(api::ModelView model)
{
    shown_ = std::move(model);
    title_->setText(
        tr("Model %1 in project %2: %n version(s)", "", static_cast<int>(shown_->versions.size()))
            .arg(text(shown_->name), text(shown_->project)));
    versions_->setRowCount(static_cast<int>(shown_->versions.size()));
    for (std::size_t i = 0; i < shown_->versions.size(); ++i) {
        const api::ModelVersionView& version = shown_->versions[i];
        QStringList aliases;
        for (const std::string& alias : version.aliases)
            aliases.append(text(alias));
        // An imported base model has no job; a fine-tuned version names the one it started from.
        QString job = version.source == "import" ? tr("imported") : QString::number(version.job);
        if (!version.base.empty())
            job += tr(" (from %1)").arg(text(version.base));
        fillRow(*versions_, static_cast<int>(i),
                {QString::number(version.version), aliases.join(", "), job,
                 version.source == "import" ? QString("-") : QString::number(version.step),
                 text(version.worker), text(version.registeredBy), text(version.digest)});
    }
    promotions_->setRowCount(static_cast<int>(shown_->promotions.size()));
    for (std::size_t i = 0; i < shown_->promotions.size(); ++i) {
        const api::PromotionView& promotion = shown_->promotions[i];
        fillRow(*promotions_, static_cast<int>(i),
                {QString::number(promotion.id), QString::number(promotion.version),
                 text(promotion.alias), text(promotion.state), text(promotion.requestedBy),
                 text(promotion.decidedBy), text(promotion.reason)});
    }
    exports_->setRowCount(static_cast<int>(shown_->exports.size()));
    for (std::size_t i = 0; i < shown_->exports.size(); ++i) {
        const api::ModelExportView& exported = shown_->exports[i];
        fillRow(*exports_, static_cast<int>(i),
                {QString::number(exported.id), QString::number(exported.version),
                 text(exported.state), text(exported.requestedBy), text(exported.decidedBy),
                 text(exported.reason), QString::number(exported.downloads),
                 text(exported.folderDigest)});
    }
    for (QTableWidget* table : {versions_, promotions_, exports_})
        table->resizeColumnsToContents();
    if (!shown_->versions.empty())
        versions_->selectRow(static_cast<int>(shown_->versions.size()) - 1);
    updateButtons();
}

void ModelsPage::updateButtons()
{
    const std::string me = session_.who() ? session_.who()->user : std::string();
    const bool mayRegister = session_.holds("model.register");
    const bool mayApprove = session_.holds("model.approve");
    const bool version = chosenVersion() != nullptr;
    promote_->setVisible(mayRegister);
    requestExport_->setVisible(mayRegister);
    alias_->setVisible(mayRegister);
    promote_->setEnabled(version);
    requestExport_->setEnabled(version);
    // Nobody decides on their own request: the buttons are not there for it.
    const api::PromotionView* promotion = chosenPromotion();
    const bool decidePromotion = mayApprove && promotion != nullptr && promotion->state == "pending"
                                 && promotion->requestedBy != me;
    approvePromotion_->setVisible(decidePromotion);
    rejectPromotion_->setVisible(decidePromotion);
    const api::ModelExportView* exported = chosenExport();
    const bool decideExport = mayApprove && exported != nullptr && exported->state == "pending"
                              && exported->requestedBy != me;
    approveExport_->setVisible(decideExport);
    rejectExport_->setVisible(decideExport);
    const bool receive =
        exported != nullptr && exported->state == "approved" && exported->requestedBy == me;
    download_->setVisible(receive);
    folder_->setVisible(receive);
}

void ModelsPage::showLineage()
{
    const api::ModelVersionView* version = chosenVersion();
    auto client = session_.client();
    if (version == nullptr || !client) {
        lineage_->clear();
        graph_->setLineage({});
        return;
    }
    const std::string reference = version->name + "@" + std::to_string(version->version);
    const int asked = asked_;
    runInBackground(
        this, [client, reference] { return client->modelLineage(reference); },
        [this, asked](Result<std::string> document) {
            if (asked != asked_)
                return;
            if (!document) {
                lineage_->setPlainText(sentence(document.error()));
                graph_->setLineage({});
                return;
            }
            lineage_->setPlainText(lineageGraph(*document));
            graph_->setLineage(modelLineageOf(*document));
            emit lineageShown();
        });
}

void ModelsPage::act(const QString& done, std::function<Result<QString>(api::ControlClient&)> call)
{
    auto client = session_.client();
    if (!client)
        return;
    error_->clear();
    runInBackground(
        this, [client, call = std::move(call)] { return call(*client); },
        [this, done](Result<QString> result) {
            if (!result) {
                showError(sentence(result.error()));
                return;
            }
            const QString what = done + *result;
            title_->setText(what);
            reload();
            showChosen();
            emit actionDone(what);
        });
}

const api::ModelVersionView* ModelsPage::chosenVersion() const
{
    const int row = chosenRow(*versions_);
    return shown_ && row >= 0 && row < static_cast<int>(shown_->versions.size())
               ? &shown_->versions[static_cast<std::size_t>(row)]
               : nullptr;
}

const api::PromotionView* ModelsPage::chosenPromotion() const
{
    const int row = chosenRow(*promotions_);
    return shown_ && row >= 0 && row < static_cast<int>(shown_->promotions.size())
               ? &shown_->promotions[static_cast<std::size_t>(row)]
               : nullptr;
}

const api::ModelExportView* ModelsPage::chosenExport() const
{
    const int row = chosenRow(*exports_);
    return shown_ && row >= 0 && row < static_cast<int>(shown_->exports.size())
               ? &shown_->exports[static_cast<std::size_t>(row)]
               : nullptr;
}

void ModelsPage::showError(const QString& message)
{
    error_->setText(message);
}

}  // namespace sealtrain::gui
