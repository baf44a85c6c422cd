// Models (issue #30; docs/registry.md, docs/gui.md "Models"): the registry's models of the
// caller's projects; a model's versions with their digests and aliases, its promotions and its
// exports, each decided here by a second person (the approve and reject buttons are absent for
// one's own request, and for whoever may not approve), an approved export received into a new
// folder, and a version's lineage drawn from its signed lineage document: dataset → job → the
// checkpoint chain → the version → its promotions. Shown to whoever may register or approve
// models.
#pragma once

#include "sealtrain/api/client.h"

#include <QWidget>

#include <optional>
#include <string>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableView;
class QTableWidget;
class QTabWidget;

namespace sealtrain::gui {

class LineageView;
class ModelTableModel;
class Session;

class ModelsPage final : public QWidget {
    Q_OBJECT

public:
    explicit ModelsPage(Session& session, QWidget* parent = nullptr);

    void reload();
    // Forgets every model shown (the user signed out or the window locked).
    void clear();
    // Chooses model `name` in the table (which shows it); false when it is not listed.
    bool choose(const std::string& name);

    [[nodiscard]] ModelTableModel& model() const noexcept { return *model_; }
    [[nodiscard]] const std::optional<api::ModelView>& shown() const noexcept { return shown_; }

signals:
    // The chosen model has arrived and is shown.
    void modelShown();
    // The chosen version's lineage document has arrived and is drawn.
    void lineageShown();
    // A request or decision went through (the model is then shown again), or an export arrived.
    void actionDone(const QString& what);

private:
    void showChosen();
    void show(api::ModelView model);
    void updateButtons();
    void showLineage();
    void act(const QString& done, std::function<Result<QString>(api::ControlClient&)> call);
    [[nodiscard]] const api::ModelVersionView* chosenVersion() const;
    [[nodiscard]] const api::PromotionView* chosenPromotion() const;
    [[nodiscard]] const api::ModelExportView* chosenExport() const;
    void showError(const QString& message);

    Session& session_;
    ModelTableModel* model_;
    QTableView* table_;
    QLabel* title_;
    QLabel* error_;
    QTabWidget* tabs_;
    QTableWidget* versions_;
    QTableWidget* promotions_;
    QTableWidget* exports_;
    QPlainTextEdit* lineage_;
    LineageView* graph_;
    QLineEdit* alias_;
    QLineEdit* reason_;
    QLineEdit* folder_;
    QPushButton* promote_;
    QPushButton* requestExport_;
    QPushButton* approvePromotion_;
    QPushButton* rejectPromotion_;
    QPushButton* approveExport_;
    QPushButton* rejectExport_;
    QPushButton* download_;
    std::optional<api::ModelView> shown_;
    int asked_ = 0;  // which choice the answers in flight belong to
};

}  // namespace sealtrain::gui
