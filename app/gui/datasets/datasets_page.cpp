// The datasets screen (datasets_page.h).
#include "datasets_page.h"

#include "common/colors.h"

#include "dataset_lineage.h"
#include "import_wizard.h"

#include "../common/background.h"
#include "../common/row_model.h"
#include "../session/session.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace sealtrain::gui {

DatasetTableModel::DatasetTableModel(QObject* parent)
    : RowModel(
        {tr("Dataset"), tr("Version"), tr("Classification"), tr("Records"), tr("Tokens"), tr("Id")},
        parent)
{
}

QVariant DatasetTableModel::cell(const api::DatasetSummary& dataset, int column, int role) const
{
    if (role == Qt::TextAlignmentRole
        && (column == Records || column == Tokens || column == Version))
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    const QLocale locale;
    switch (column) {
    case Name: return QString::fromStdString(dataset.name);
    case Version: return QVariant::fromValue<qlonglong>(dataset.version);
    case Classification: return QString::fromStdString(dataset.classification);
    case Records: return locale.toString(static_cast<qulonglong>(dataset.records));
    case Tokens: return locale.toString(static_cast<qulonglong>(dataset.tokens));
    case Id: return QString::fromStdString(dataset.id);
    default: return {};
    }
}

DatasetsPage::DatasetsPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , model_(new DatasetTableModel(this))
    , table_(new QTableView(this))
    , details_(new QLabel(this))
    , reader_(new QLineEdit(this))
    , grant_(new QPushButton(tr("&Grant read"), this))
    , revoke_(new QPushButton(tr("Re&voke read"), this))
    , import_(new QPushButton(tr("&Import a dataset…"), this))
    , status_(new QLabel(this))
    , lineage_(new LineageView(
          tr("Choose a dataset to see its versions and the jobs trained on them."), this))
{
    setObjectName("datasetsPage");
    setUpTable(*table_, *model_, "datasetsTable", tr("Datasets"));
    details_->setObjectName("datasetDetails");
    details_->setWordWrap(true);
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    details_->setAccessibleName(tr("The dataset's manifest and readers"));
    reader_->setObjectName("datasetReader");
    reader_->setPlaceholderText(tr("user"));
    reader_->setAccessibleName(tr("User to grant or revoke read access"));
    grant_->setObjectName("grantReadButton");
    revoke_->setObjectName("revokeReadButton");
    import_->setObjectName("importDatasetButton");
    status_->setObjectName("datasetsStatus");
    status_->setWordWrap(true);
    status_->setStyleSheet(toneStyle(Tone::Bad));
    lineage_->setObjectName("datasetLineage");
    lineage_->setAccessibleName(tr("The dataset's versions and the jobs trained on them"));

    auto* grants = new QHBoxLayout;
    grants->addWidget(reader_, 1);
    grants->addWidget(grant_);
    grants->addWidget(revoke_);
    auto* lineageBox = new QGroupBox(tr("Versions and the jobs trained on them"), this);
    lineageScroll_ = new QScrollArea(lineageBox);
    auto* lineageScroll = lineageScroll_;
    // The drawing's new size reaches the scroll bars after a layout pass: scroll then.
    connect(lineageScroll->horizontalScrollBar(), &QScrollBar::rangeChanged, this,
            &DatasetsPage::scrollToSelected);
    lineageScroll->setWidget(lineage_);
    lineageScroll->setWidgetResizable(true);
    lineageScroll->setFrameShape(QFrame::NoFrame);
    auto* lineageLayout = new QVBoxLayout(lineageBox);
    lineageLayout->addWidget(lineageScroll);
    auto* side = new QWidget(this);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->addWidget(details_);
    sideLayout->addWidget(lineageBox, 1);
    sideLayout->addLayout(grants);
    sideLayout->addWidget(status_);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(withFilter(*table_));
    split->addWidget(side);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(import_, 0, Qt::AlignLeft);
    layout->addWidget(split);

    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (const api::DatasetSummary* dataset = model_->rowAt(current.row()))
                    show(*dataset);
            });
    connect(grant_, &QPushButton::clicked, this, [this] { grant(true); });
    connect(revoke_, &QPushButton::clicked, this, [this] { grant(false); });
    connect(import_, &QPushButton::clicked, this, &DatasetsPage::openImport);
}

void DatasetsPage::openImport()
{
    auto* wizard = new ImportWizard(session_, this);
    wizard->setAttribute(Qt::WA_DeleteOnClose);
    connect(wizard, &ImportWizard::imported, this, &DatasetsPage::reload);
    wizard->open();
}

void DatasetsPage::permit()
{
    const bool steward = session_.holds("dataset.grant");
    for (QWidget* widget : std::initializer_list<QWidget*>{reader_, grant_, revoke_})
        widget->setVisible(steward);
    import_->setVisible(session_.holds("dataset.import"));
}

void DatasetsPage::reload()
{
    permit();
    auto client = session_.client();
    if (!client)
        return;
    runInBackground(
        this, [client] { return client->datasets().listDatasets(); },
        [this](Result<std::vector<api::DatasetSummary>> datasets) {
            if (!datasets) {
                status_->setText(sentence(datasets.error()));
                return;
            }
            model_->setRows(std::move(*datasets));
            table_->resizeColumnsToContents();
            drawLineage();
        });
    // The jobs trained on each version, for those who may see jobs.
    jobs_.clear();
    if (session_.holds("job.submit") || session_.holds("job.approve"))
        runInBackground(
            this, [client] { return client->jobs().listJobs(); },
            [this](Result<std::vector<api::JobSummary>> jobs) {
                if (jobs)
                    jobs_ = std::move(*jobs);
                drawLineage();
            });
}

void DatasetsPage::drawLineage()
{
    lineage_->setLineage(lineageOf(model_->rows(), jobs_, shown_));
    scrollToSelected();
}

void DatasetsPage::scrollToSelected()
{
    const QRect selected = lineage_->selectedBox();
    if (!selected.isNull())
        lineageScroll_->ensureVisible(selected.center().x(), selected.center().y(),
                                      selected.width() / 2 + 8, selected.height() / 2 + 8);
}

void DatasetsPage::show(const api::DatasetSummary& dataset)
{
    auto client = session_.client();
    if (!client)
        return;
    shown_ = dataset.id;
    status_->clear();
    drawLineage();
    runInBackground(
        this, [client, id = dataset.id] { return client->datasets().showDataset(id); },
        [this](const Result<api::DatasetDetails>& details) {
            if (!details) {
                details_->setText(sentence(details.error()));
                return;
            }
            QStringList lines;
            lines << tr("<b>%1</b> version %2, %3")
                         .arg(QString::fromStdString(details->dataset.name).toHtmlEscaped())
                         .arg(details->dataset.version)
                         .arg(QString::fromStdString(details->dataset.classification));
            lines << tr("Made by %1 on %2; manifest signed by %3")
                         .arg(QString::fromStdString(details->creator).toHtmlEscaped(),
                              utcText(details->createdUnix),
                              QString::fromStdString(details->signer).toHtmlEscaped());
            if (!details->parent.empty())
                lines << tr("Parent version %1")
                             .arg(QString::fromStdString(details->parent).toHtmlEscaped());
            if (details->manifest) {
                const api::ManifestFacts& m = *details->manifest;
                lines << tr("Tokenizer %1, from %2 sources (%3); train %4 records in %5 shards, "
                            "validation %6 records")
                             .arg(QString::fromStdString(m.tokenizer), QString::number(m.sources),
                                  QString::fromStdString(m.inputFormat))
                             .arg(m.train.records)
                             .arg(m.train.shards)
                             .arg(m.validation.records);
            }
            QStringList readers;
            for (const std::string& reader : details->readers)
                readers << QString::fromStdString(reader).toHtmlEscaped();
            lines
                << tr("Readers: %1").arg(readers.isEmpty() ? tr("nobody yet") : readers.join(", "));
            details_->setText(lines.join("<br>"));
        });
}

void DatasetsPage::grant(bool add)
{
    auto client = session_.client();
    if (!client || shown_.empty())
        return;
    runInBackground(
        this,
        [client, add, id = shown_, user = reader_->text().trimmed().toStdString()] {
            return add ? client->datasets().grantRead(id, user)
                       : client->datasets().revokeRead(id, user);
        },
        [this](const Result<void>& done) {
            if (!done) {
                status_->setText(sentence(done.error()));
                return;
            }
            reader_->clear();
            for (const auto& row : model_->rows())
                if (row.id == shown_)
                    show(row);
        });
}

}  // namespace sealtrain::gui
