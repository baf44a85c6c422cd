// The tabs of the models screen (models_page.h), one widget each: a model's versions (promote one,
// ask to export one), its promotions and its exports (each decided by a second person: the
// approve and reject buttons are absent for one's own request and for whoever may not approve; an
// approved export received into a new folder by whoever asked for it), and the chosen version's
// lineage. Each fills itself from the model shown; what it asks of the control plane goes through
// the page (ModelCalls), which shows the outcome and reads the model again.
#pragma once

#include "sealtrain/api/client.h"

#include <QString>
#include <QWidget>

#include <functional>
#include <optional>
#include <string>

class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;

namespace sealtrain::gui {

class LineageView;

// What the tabs ask of the page: run a request or decision (the sentence to show when it went
// through, and the call, whose answer is appended to it), the reason typed under the tabs, and
// a sentence that something is missing.
struct ModelCalls {
    using Call = std::function<Result<QString>(api::ControlClient&)>;
    std::function<void(const QString& done, Call call)> act;
    std::function<std::string()> reason;
    std::function<void(const QString& message)> error;
};

// Who is deciding, for the buttons a tab shows.
struct ModelViewer {
    std::string user;
    bool mayRegister = false;
    bool mayApprove = false;
};

class VersionsTab final : public QWidget {
    Q_OBJECT

public:
    VersionsTab(const ModelCalls& calls, QWidget* parent);

    // Fills the table from `model`, choosing its newest version.
    void show(const api::ModelView* model);
    [[nodiscard]] const api::ModelVersionView* chosen() const;
    void updateButtons(const ModelViewer& viewer);

signals:
    void chosenChanged();

private:
    const ModelCalls& calls_;
    const api::ModelView* model_ = nullptr;
    QTableWidget* table_;
    QLineEdit* alias_;
    QPushButton* promote_;
    QPushButton* requestExport_;
};

class PromotionsTab final : public QWidget {
    Q_OBJECT

public:
    PromotionsTab(const ModelCalls& calls, QWidget* parent);

    void show(const api::ModelView* model);
    [[nodiscard]] const api::PromotionView* chosen() const;
    void updateButtons(const ModelViewer& viewer);

signals:
    void chosenChanged();

private:
    void decide(bool approve);

    const ModelCalls& calls_;
    const api::ModelView* model_ = nullptr;
    QTableWidget* table_;
    QPushButton* approve_;
    QPushButton* reject_;
};

class ExportsTab final : public QWidget {
    Q_OBJECT

public:
    ExportsTab(const ModelCalls& calls, QWidget* parent);

    void show(const api::ModelView* model);
    [[nodiscard]] const api::ModelExportView* chosen() const;
    void updateButtons(const ModelViewer& viewer);

signals:
    void chosenChanged();

private:
    void decide(bool approve);
    void receive();

    const ModelCalls& calls_;
    const api::ModelView* model_ = nullptr;
    QTableWidget* table_;
    QLineEdit* folder_;
    QPushButton* download_;
    QPushButton* approve_;
    QPushButton* reject_;
};

class LineageTab final : public QWidget {
    Q_OBJECT

public:
    explicit LineageTab(QWidget* parent);

    // The version's lineage document (docs/formats/registry.md), or why it could not be read;
    // nullopt: no version chosen.
    void show(const std::optional<Result<std::string>>& document);

private:
    QPlainTextEdit* text_;
    LineageView* graph_;
};

}  // namespace sealtrain::gui
