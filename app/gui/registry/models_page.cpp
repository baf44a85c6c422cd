// The models screen (models_page.h): the models table, the chosen model's tabs, and the calls
// they make, each followed by reading the model again.
#include "models_page.h"

#include "common/colors.h"

#include "../common/background.h"
#include "../common/row_model.h"
#include "../session/session.h"
#include "import_model_dialog.h"
#include "model_table_model.h"

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <utility>

namespace sealtrain::gui {

ModelsPage::ModelsPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , model_(new ModelTableModel(this))
    , table_(new QTableView(this))
    , title_(new QLabel(this))
    , error_(new QLabel(this))
    , tabs_(new QTabWidget(this))
    , reason_(namedField(this, "modelReason", tr("Reason for a request or a rejection"),
                         tr("Reason (for a request or a rejection)")))
    , calls_{[this](const QString& done, const ModelCalls::Call& call) { act(done, call); },
             [this] { return reason_->text().toStdString(); },
             [this](const QString& message) { showError(message); }}
    , versions_(new VersionsTab(calls_, this))
    , promotions_(new PromotionsTab(calls_, this))
    , exports_(new ExportsTab(calls_, this))
    , lineage_(new LineageTab(this))
    , import_(new QPushButton(tr("&Import a base model…"), this))
{
    setObjectName("modelsPage");
    setUpTable(*table_, *model_, "modelsTable", tr("Models"));
    title_->setObjectName("modelsTitle");
    title_->setWordWrap(true);
    title_->setText(tr("Choose a model to see its versions, promotions, exports and lineage."));
    error_->setObjectName("modelsError");
    error_->setWordWrap(true);
    error_->setStyleSheet(toneStyle(Tone::Bad));
    tabs_->setObjectName("modelTabs");
    tabs_->addTab(versions_, tr("Versions"));
    tabs_->addTab(promotions_, tr("Promotions"));
    tabs_->addTab(exports_, tr("Exports"));
    tabs_->addTab(lineage_, tr("Lineage"));

    auto* details = new QWidget(this);
    auto* detailsLayout = new QVBoxLayout(details);
    detailsLayout->addWidget(title_);
    detailsLayout->addWidget(error_);
    detailsLayout->addWidget(tabs_, 1);
    detailsLayout->addWidget(reason_);
    import_->setObjectName("importModelOpen");
    auto* list = new QWidget(this);
    auto* listLayout = new QVBoxLayout(list);
    listLayout->setContentsMargins(0, 0, 0, 0);
    listLayout->addWidget(withFilter(*table_), 1);
    listLayout->addWidget(import_);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(list);
    split->addWidget(details);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    split->setSizes({330, 670});
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { showChosen(); });
    connect(import_, &QPushButton::clicked, this, [this] { openImport(); });
    connect(versions_, &VersionsTab::chosenChanged, this, [this] {
        updateButtons();
        showLineage();
    });
    connect(promotions_, &PromotionsTab::chosenChanged, this, [this] { updateButtons(); });
    connect(exports_, &ExportsTab::chosenChanged, this, [this] { updateButtons(); });
    updateButtons();
}

void ModelsPage::permit()
{
    import_->setVisible(session_.holds("model.register"));
}

ImportModelDialog* ModelsPage::openImport()
{
    auto* dialog = new ImportModelDialog(session_, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &ImportModelDialog::imported, this, [this](const QString& model) {
        emit actionDone(tr("Imported %1").arg(model));
        reload();
    });
    dialog->open();
    return dialog;
}

void ModelsPage::reload()
{
    permit();
    auto client = session_.client();
    if (!client)
        return;
    runInBackground(
        this, [client] { return client->registry().listModels(); },
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
    // The tabs let go of the model before it goes.
    versions_->show(nullptr);
    promotions_->show(nullptr);
    exports_->show(nullptr);
    lineage_->show(std::nullopt);
    shown_.reset();
    error_->clear();
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
    title_->setText(tr("Reading %1…").arg(QString::fromStdString(name)));
    runInBackground(
        this, [client, name] { return client->registry().showModel(name); },
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
            .arg(QString::fromStdString(shown_->name), QString::fromStdString(shown_->project)));
    promotions_->show(&*shown_);
    exports_->show(&*shown_);
    versions_->show(&*shown_);  // last: choosing its newest version draws that one's lineage
    updateButtons();
}

void ModelsPage::updateButtons()
{
    const ModelViewer viewer{session_.who() ? session_.who()->user : std::string(),
                             session_.holds("model.register"), session_.holds("model.approve")};
    versions_->updateButtons(viewer);
    promotions_->updateButtons(viewer);
    exports_->updateButtons(viewer);
}

void ModelsPage::showLineage()
{
    const api::ModelVersionView* version = versions_->chosen();
    auto client = session_.client();
    if (version == nullptr || !client) {
        lineage_->show(std::nullopt);
        return;
    }
    const std::string reference = version->name + "@" + std::to_string(version->version);
    const int asked = asked_;
    runInBackground(
        this, [client, reference] { return client->registry().modelLineage(reference); },
        [this, asked](Result<std::string> document) {
            if (asked != asked_)
                return;
            const bool drawn = document.ok();
            lineage_->show(std::move(document));
            if (drawn)
                emit lineageShown();
        });
}

void ModelsPage::act(const QString& done, const ModelCalls::Call& call)
{
    auto client = session_.client();
    if (!client)
        return;
    error_->clear();
    runInBackground(
        this, [client, call] { return call(*client); },
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

void ModelsPage::showError(const QString& message)
{
    error_->setText(message);
}

}  // namespace sealtrain::gui
