// The dataset import wizard (import_wizard.h).
#include "import_wizard.h"

#include "common/colors.h"

#include "../common/background.h"
#include "../session/session.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

#include <atomic>
#include <cmath>
#include <functional>
#include <utility>

namespace sealtrain::gui {

namespace {

// A wizard page whose Next button waits for `complete`.
class CheckedPage final : public QWizardPage {
public:
    explicit CheckedPage(std::function<bool()> complete)
        : complete_(std::move(complete))
    {
    }
    [[nodiscard]] bool isComplete() const override { return complete_(); }
    void recheck() { emit completeChanged(); }

private:
    std::function<bool()> complete_;
};

constexpr int kPathRole = Qt::UserRole;
constexpr int kSizeRole = Qt::UserRole + 1;

void markError(QLabel& label)
{
    label.setWordWrap(true);
    label.setStyleSheet(toneStyle(Tone::Bad));
}

}  // namespace

QString importReportText(const QString& reportJson)
{
    const QJsonObject report = QJsonDocument::fromJson(reportJson.toUtf8()).object();
    if (report.isEmpty())
        return {};
    const QLocale locale;
    auto count = [&](const char* key) {
        return locale.toString(static_cast<qlonglong>(report.value(key).toDouble()));
    };
    QString text = ImportWizard::tr("Read %1 records from %2 files (%3): kept %4, %5 duplicates, "
                                    "%6 skipped.")
                       .arg(count("records_read"), count("files_read"),
                            locale.formattedDataSize(
                                static_cast<qint64>(report.value("bytes_read").toDouble())),
                            count("records_kept"), count("duplicates"), count("skipped"));
    QStringList found;
    const QJsonObject pii = report.value("pii").toObject();
    for (auto kind = pii.begin(); kind != pii.end(); ++kind) {
        const auto n = static_cast<qlonglong>(kind.value().toObject().value("count").toDouble());
        if (n > 0)
            found << QStringLiteral("%1 %2").arg(locale.toString(n), kind.key());
    }
    if (found.isEmpty())
        text += ' ' + ImportWizard::tr("No possible PII was found.");
    else
        text += ' '
                + ImportWizard::tr("Possible PII for review, %1: %2.")
                      .arg(report.value("pii_redacted").toBool() ? ImportWizard::tr("redacted")
                                                                 : ImportWizard::tr("kept as is"),
                           found.join(", "));
    return text;
}

ImportWizard::ImportWizard(Session& session, QWidget* parent)
    : QWizard(parent)
    , session_(session)
{
    setObjectName("importWizard");
    setWindowTitle(tr("Import a dataset"));
    setWizardStyle(QWizard::ClassicStyle);
    // Once imported, Back would only import again: it is off when the last page can finish.
    setOption(QWizard::DisabledBackButtonOnLastPage, true);
    setPage(FilesPage, makeFilesPage());
    setPage(SettingsPage, makeSettingsPage());
    setPage(UploadPage, makeUploadPage());
    setMinimumSize(640, 460);
}

ImportWizard::~ImportWizard()
{
    // A window closed mid-upload ends the upload rather than leaving it to run unseen.
    if (cancel_)
        cancel_->cancel();
}

QWizardPage* ImportWizard::makeFilesPage()
{
    auto* page = new CheckedPage(
        [this] { return !name_->text().trimmed().isEmpty() && files_->count() > 0; });
    page->setObjectName("importFilesPage");
    page->setTitle(tr("Name and files"));
    page->setSubTitle(
        tr("A new name makes a new dataset; an existing one makes its next version."));
    name_ = new QLineEdit(page);
    name_->setObjectName("importName");
    name_->setPlaceholderText(tr("1-64 of a-z 0-9 _ -"));
    name_->setAccessibleName(tr("Dataset name"));
    files_ = new QListWidget(page);
    files_->setObjectName("importFiles");
    files_->setAccessibleName(tr("Files to import"));
    path_ = new QLineEdit(page);
    path_->setObjectName("importPath");
    path_->setPlaceholderText(tr("A file's path"));
    path_->setAccessibleName(tr("Path of a file to add"));
    auto* add = new QPushButton(tr("&Add"), page);
    add->setObjectName("importAddButton");
    auto* browse = new QPushButton(tr("&Browse…"), page);
    browse->setObjectName("importBrowseButton");
    auto* remove = new QPushButton(tr("&Remove"), page);
    remove->setObjectName("importRemoveButton");
    filesError_ = new QLabel(page);
    filesError_->setObjectName("importFilesError");
    markError(*filesError_);

    auto* form = new QFormLayout;
    form->addRow(tr("&Name:"), name_);
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(path_, 1);
    pathRow->addWidget(add);
    pathRow->addWidget(browse);
    pathRow->addWidget(remove);
    auto* layout = new QVBoxLayout(page);
    layout->addLayout(form);
    layout->addWidget(files_, 1);
    layout->addLayout(pathRow);
    layout->addWidget(filesError_);

    connect(name_, &QLineEdit::textChanged, page, &CheckedPage::recheck);
    auto addTyped = [this] {
        if (addFile(path_->text().trimmed()))
            path_->clear();
    };
    connect(add, &QPushButton::clicked, this, addTyped);
    connect(path_, &QLineEdit::returnPressed, this, addTyped);
    path_->installEventFilter(this);
    connect(browse, &QPushButton::clicked, this, [this] {
        for (const QString& path : QFileDialog::getOpenFileNames(this, tr("Files to import")))
            addFile(path);
    });
    connect(remove, &QPushButton::clicked, this, [this, page] {
        delete files_->currentItem();
        page->recheck();
    });
    connect(files_->model(), &QAbstractItemModel::rowsInserted, page, &CheckedPage::recheck);
    return page;
}

bool ImportWizard::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == path_ && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        if (key == Qt::Key_Return || key == Qt::Key_Enter) {
            emit path_->returnPressed();
            return true;
        }
    }
    return QWizard::eventFilter(watched, event);
}

bool ImportWizard::addFile(const QString& path)
{
    const QFileInfo info(path);
    if (path.isEmpty() || !info.isFile() || !info.isReadable()) {
        filesError_->setText(
            tr("'%1' is not a file this account can read; check the path.").arg(path));
        return false;
    }
    const QString absolute = info.absoluteFilePath();
    for (int row = 0; row < files_->count(); ++row) {
        if (files_->item(row)->data(kPathRole).toString() == absolute) {
            filesError_->setText(tr("'%1' is listed already.").arg(info.fileName()));
            return false;
        }
    }
    auto* item =
        new QListWidgetItem(tr("%1 (%2)").arg(absolute, QLocale().formattedDataSize(info.size())));
    item->setData(kPathRole, absolute);
    item->setData(kSizeRole, static_cast<qulonglong>(info.size()));
    files_->addItem(item);
    filesError_->clear();
    if (name_->text().isEmpty())
        name_->setText(info.completeBaseName()
                           .toLower()
                           .replace(QRegularExpression("[^a-z0-9_-]"), "-")
                           .left(64));
    return true;
}

QWizardPage* ImportWizard::makeSettingsPage()
{
    auto* page = new QWizardPage;
    page->setObjectName("importSettingsPage");
    page->setTitle(tr("Reading and labelling"));
    page->setSubTitle(tr("The control plane reads the files this way, screens every record and "
                         "seals the result under this classification."));
    format_ = new QComboBox(page);
    format_->setObjectName("importFormat");
    format_->setAccessibleName(tr("Format"));
    format_->addItem(tr("Text files: a file is a record"), "text-files");
    format_->addItem(tr("Text records: blank lines separate records"), "text-records");
    format_->addItem(tr("JSON Lines: one object a line"), "jsonl");
    format_->addItem(tr("CSV: one row a record"), "csv");
    format_->addItem(tr("Fortune: '%' lines separate records"), "fortune");
    field_ = new QLineEdit(page);
    field_->setObjectName("importField");
    field_->setPlaceholderText(tr("text"));
    field_->setAccessibleName(tr("The JSON field or CSV column holding the text"));
    field_->setEnabled(false);
    classification_ = new QComboBox(page);
    classification_->setObjectName("importClassification");
    classification_->setAccessibleName(tr("Classification"));
    classification_->setEditable(true);
    classification_->addItems({"public", "internal", "confidential", "phi"});
    classification_->setCurrentText("internal");
    policy_ = new QComboBox(page);
    policy_->setObjectName("importPolicy");
    policy_->setAccessibleName(tr("What to do with an invalid record"));
    policy_->addItem(tr("Skip it and report it"), "skip");
    policy_->addItem(tr("Refuse the whole import"), "reject");
    redact_ = new QCheckBox(tr("Replace possible PII with placeholders ([EMAIL], [IP], …)"), page);
    redact_->setObjectName("importRedactPii");
    validation_ = new QDoubleSpinBox(page);
    validation_->setObjectName("importValidation");
    validation_->setAccessibleName(tr("Share of records kept for validation, in percent"));
    validation_->setRange(0, 100);
    validation_->setDecimals(2);
    validation_->setSingleStep(0.5);
    validation_->setSuffix(" %");
    validation_->setValue(1);

    auto* form = new QFormLayout(page);
    form->addRow(tr("&Format:"), format_);
    form->addRow(tr("F&ield or column:"), field_);
    form->addRow(tr("&Classification:"), classification_);
    form->addRow(tr("&Invalid records:"), policy_);
    form->addRow(QString(), redact_);
    form->addRow(tr("&Validation share:"), validation_);
    connect(format_, &QComboBox::currentIndexChanged, this, [this] {
        const QString format = format_->currentData().toString();
        field_->setEnabled(format == "jsonl" || format == "csv");
    });
    return page;
}

api::ImportSettings ImportWizard::settings() const
{
    api::ImportSettings settings;
    settings.name = name_->text().trimmed().toStdString();
    settings.format = format_->currentData().toString().toStdString();
    if (field_->isEnabled())
        settings.field = field_->text().trimmed().toStdString();
    settings.classification = classification_->currentText().trimmed().toStdString();
    settings.policy = policy_->currentData().toString().toStdString();
    settings.redactPii = redact_->isChecked();
    settings.validationBasisPoints =
        static_cast<std::uint32_t>(std::lround(validation_->value() * 100.0));
    return settings;
}

QWizardPage* ImportWizard::makeUploadPage()
{
    auto* page = new CheckedPage([this] { return done_; });
    page->setObjectName("importUploadPage");
    page->setTitle(tr("Upload and screening"));
    summary_ = new QLabel(page);
    summary_->setObjectName("importSummary");
    summary_->setWordWrap(true);
    progress_ = new QProgressBar(page);
    progress_->setObjectName("importProgress");
    progress_->setAccessibleName(tr("Upload progress"));
    progress_->setRange(0, 1000);
    progress_->setFormat("%p %");
    cancelUpload_ = new QPushButton(tr("&Stop the upload"), page);
    cancelUpload_->setObjectName("importCancelButton");
    result_ = new QLabel(page);
    result_->setObjectName("importResult");
    result_->setWordWrap(true);
    result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    error_ = new QLabel(page);
    error_->setObjectName("importError");
    markError(*error_);
    auto* layout = new QVBoxLayout(page);
    layout->addWidget(summary_);
    layout->addWidget(progress_);
    layout->addWidget(cancelUpload_, 0, Qt::AlignLeft);
    layout->addWidget(result_);
    layout->addWidget(error_);
    layout->addStretch(1);
    connect(cancelUpload_, &QPushButton::clicked, this, [this] {
        if (cancel_)
            cancel_->cancel();
    });
    return page;
}

void ImportWizard::initializePage(int id)
{
    QWizard::initializePage(id);
    if (id == UploadPage)
        startUpload();
}

void ImportWizard::startUpload()
{
    auto client = session_.client();
    if (!client || cancel_ || done_)
        return;
    std::vector<api::UploadFile> files;
    quint64 total = 0;
    for (int row = 0; row < files_->count(); ++row) {
        const QListWidgetItem* item = files_->item(row);
        const QString path = item->data(kPathRole).toString();
        const quint64 size = item->data(kSizeRole).toULongLong();
        files.push_back({path.toStdString(), QFileInfo(path).fileName().toStdString(), size});
        total += size;
    }
    const api::ImportSettings wanted = settings();
    summary_->setText(tr("Uploading %1 files (%2) as '%3', classified %4.")
                          .arg(files.size())
                          .arg(QLocale().formattedDataSize(static_cast<qint64>(total)),
                               QString::fromStdString(wanted.name),
                               QString::fromStdString(wanted.classification)));
    progress_->setValue(0);
    result_->clear();
    error_->clear();
    cancel_ = std::make_shared<api::CallCancel>();
    cancelUpload_->setVisible(true);
    button(QWizard::BackButton)->setEnabled(false);

    QPointer<ImportWizard> self(this);
    auto report = [self, shown = std::make_shared<std::atomic<int>>(-1)](std::uint64_t sent,
                                                                         std::uint64_t all) {
        // At most a thousand updates for any size: the GUI thread stays free.
        const int permille = all == 0 ? 1000 : static_cast<int>(sent * 1000 / all);
        if (shown->exchange(permille) == permille || !self)
            return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, sent, all] {
                if (self)
                    self->showProgress(sent, all);
            },
            Qt::QueuedConnection);
    };
    runInBackground(
        this,
        [client, wanted, files = std::move(files), report, cancel = cancel_] {
            return client->datasets().importDataset(wanted, files, report, cancel.get());
        },
        [this](const Result<api::ImportedDataset>& imported) {
            cancel_.reset();
            cancelUpload_->setVisible(false);
            if (!imported) {
                button(QWizard::BackButton)->setEnabled(true);
                summary_->setText(tr("Nothing was imported."));
                error_->setText(sentence(imported.error())
                                + tr(" Go back to change the files or settings."));
                return;
            }
            progress_->setValue(progress_->maximum());
            summary_->setText(tr("Done: the dataset is sealed, signed and in the list."));
            const api::DatasetSummary& made = imported->dataset;
            QString text = tr("<b>Imported '%1' version %2</b>: %3 records, %4 tokens, %5; "
                              "manifest signed by key %6.")
                               .arg(QString::fromStdString(made.name).toHtmlEscaped())
                               .arg(made.version)
                               .arg(QLocale().toString(static_cast<qulonglong>(made.records)),
                                    QLocale().toString(static_cast<qulonglong>(made.tokens)),
                                    QString::fromStdString(made.classification).toHtmlEscaped(),
                                    QString::fromStdString(imported->signer).toHtmlEscaped());
            const QString screening =
                importReportText(QString::fromStdString(imported->reportJson));
            if (!screening.isEmpty())
                text += "<br><br>" + screening.toHtmlEscaped();
            result_->setText(text);
            done_ = true;
            static_cast<CheckedPage*>(page(UploadPage))->recheck();
            emit this->imported(made);
        });
}

void ImportWizard::showProgress(quint64 sent, quint64 total)
{
    progress_->setValue(total == 0 ? progress_->maximum() : static_cast<int>(sent * 1000 / total));
    if (sent == total)
        summary_->setText(tr("Uploaded; the control plane is screening, tokenizing and sealing "
                             "the records."));
}

void ImportWizard::reject()
{
    if (cancel_) {
        // The first Cancel stops the upload; the window stays to say so.
        cancel_->cancel();
        return;
    }
    QWizard::reject();
}

}  // namespace sealtrain::gui
