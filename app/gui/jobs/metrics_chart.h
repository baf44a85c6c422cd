// Live charts of a job's metrics (Qt Charts): loss and validation loss by step, and tokens/s and
// MFU by step, fed the trainer's JSON lines as Jobs.WatchJob delivers them (docs/trainer.md,
// "Metrics"). Lines that are not step or validation lines are ignored. Points are drawn in
// batches, at most every 100 ms (issue #51): a line series recomputes its whole geometry for
// each append, so drawing a busy job's lines one by one stalled the window for 300 ms at two
// thousand steps (docs/performance.md, "The desktop never stalls").
#pragma once

#include <QList>
#include <QPointF>
#include <QWidget>

#include <string>

QT_BEGIN_NAMESPACE
class QChart;
class QLineSeries;
class QTimer;
class QValueAxis;
QT_END_NAMESPACE

namespace sealtrain::gui {

class MetricsChart final : public QWidget {
    Q_OBJECT

public:
    explicit MetricsChart(QWidget* parent = nullptr);

    void clear();
    // One metrics line (JSON); returns whether it adds a point, drawn with the next batch.
    bool addLine(const std::string& json);
    // The points drawn so far (a line added is drawn within 100 ms).
    [[nodiscard]] int lossPoints() const;
    [[nodiscard]] int validationPoints() const;
    [[nodiscard]] int throughputPoints() const;

private:
    // Draws the points added since the last batch, each series in one append.
    void draw();

    QLineSeries* loss_;
    QLineSeries* validation_;
    QLineSeries* tokens_;
    QLineSeries* mfu_;
    QValueAxis* lossX_;
    QValueAxis* lossY_;
    QValueAxis* speedX_;
    QValueAxis* tokensY_;
    QValueAxis* mfuY_;
    // The points added since the last batch, by series.
    QList<QPointF> newLoss_;
    QList<QPointF> newValidation_;
    QList<QPointF> newTokens_;
    QList<QPointF> newMfu_;
    QTimer* batch_;
};

}  // namespace sealtrain::gui
