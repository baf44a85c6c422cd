// The dataset import wizard (dataset.import): the files, then how to read and label them
// (format, field, classification, what to do with an invalid record, PII, the validation share),
// then the upload with a progress bar and a cancel button, and the control plane's screening
// report. The files stream to the control plane, which screens, tokenizes, seals and signs them;
// this window never holds a key. A cancelled or refused import leaves nothing behind.
#pragma once

#include "sealtrain/api/client.h"

#include <QString>
#include <QWizard>

#include <memory>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;

namespace sealtrain::gui {

class Session;

// The screening report's counts and PII findings in a few sentences (empty for a report that
// is not a JSON object).
[[nodiscard]] QString importReportText(const QString& reportJson);

class ImportWizard final : public QWizard {
    Q_OBJECT

public:
    enum PageId { FilesPage, SettingsPage, UploadPage };

    explicit ImportWizard(Session& session, QWidget* parent = nullptr);
    ~ImportWizard() override;

    // Adds a file to upload; false (and a sentence under the list) when it is not a readable
    // regular file or is listed already.
    bool addFile(const QString& path);
    [[nodiscard]] api::ImportSettings settings() const;
    // Whether an upload is under way.
    [[nodiscard]] bool uploading() const noexcept { return cancel_ != nullptr; }
    // Cancel (or Escape): stops an upload under way first, then closes.
    void reject() override;

signals:
    // The control plane made a dataset (its new version).
    void imported(const api::DatasetSummary& dataset);

protected:
    void initializePage(int id) override;
    // Return in the path field adds the file instead of turning the page.
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWizardPage* makeFilesPage();
    QWizardPage* makeSettingsPage();
    QWizardPage* makeUploadPage();
    void startUpload();
    void showProgress(quint64 sent, quint64 total);

    Session& session_;
    QLineEdit* name_ = nullptr;
    QListWidget* files_ = nullptr;
    QLineEdit* path_ = nullptr;
    QLabel* filesError_ = nullptr;
    QComboBox* format_ = nullptr;
    QLineEdit* field_ = nullptr;
    QComboBox* classification_ = nullptr;
    QComboBox* policy_ = nullptr;
    QCheckBox* redact_ = nullptr;
    QDoubleSpinBox* validation_ = nullptr;
    QLabel* summary_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancelUpload_ = nullptr;
    QLabel* result_ = nullptr;
    QLabel* error_ = nullptr;
    std::shared_ptr<api::CallCancel> cancel_;
    bool done_ = false;
};

}  // namespace sealtrain::gui
