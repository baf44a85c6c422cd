// Runs' curves overlaid (Qt Charts; docs/gui.md, "Runs"): each run's training loss as a solid
// line and its validation loss as a dashed one in the same colour, and a marker where another
// attempt's steps begin (a restart). Fed whole histories, as Runs.RunMetrics returns them.
#pragma once

#include "sealtrain/api/client.h"

#include <QWidget>

#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
class QValueAxis;
QT_END_NAMESPACE

namespace sealtrain::gui {

class CompareChart final : public QWidget {
    Q_OBJECT

public:
    explicit CompareChart(QWidget* parent = nullptr);

    // Replaces what is drawn with `runs` and their histories (histories[i] is runs[i]'s).
    void showRuns(const std::vector<api::RunView>& runs,
                  const std::vector<std::vector<api::RunPointView>>& histories);
    // What is drawn, for tests: the curves (a run's loss and validation loss each count), their
    // points, and the restart markers.
    [[nodiscard]] int curves() const;
    [[nodiscard]] int points() const;
    [[nodiscard]] int restartMarkers() const;

private:
    QChart* chart_;
    QValueAxis* x_;
    QValueAxis* y_;
};

}  // namespace sealtrain::gui
