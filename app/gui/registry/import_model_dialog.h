// A base model imported from a Hugging Face GPT-2 folder (issue #51; `sealtrainctl model import`):
// the folder chosen in the desktop's folder dialog (config.json, model.safetensors, vocab.json,
// merges.txt), the model's name, project and description; the upload with a progress bar; the
// control plane checks the files and records the version (model.register in the project).
#pragma once

#include "sealtrain/api/registry_views.h"

#include <QDialog>

#include <atomic>
#include <memory>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace sealtrain::gui {

class Session;

class ImportModelDialog final : public QDialog {
    Q_OBJECT

public:
    explicit ImportModelDialog(Session& session, QWidget* parent = nullptr);
    [[nodiscard]] bool busy() const noexcept { return busy_; }

signals:
    // A version was imported (the models screen reads its list again).
    void imported(const QString& model);

private:
    void start();

    Session& session_;
    QLineEdit* folder_;
    QLineEdit* name_;
    QLineEdit* project_;
    QLineEdit* description_;
    QProgressBar* progress_;
    QLabel* status_;
    QPushButton* import_;
    QPushButton* close_;
    bool busy_ = false;
};

}  // namespace sealtrain::gui
