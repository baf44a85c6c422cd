// Live metrics charts (metrics_chart.h).
#include "metrics_chart.h"

#include "common/colors.h"

#include <QChart>
#include <QChartView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineSeries>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>

namespace sealtrain::gui {
namespace {

QValueAxis* axis(const QString& title)
{
    auto* made = new QValueAxis;
    made->setTitleText(title);
    made->setLabelFormat("%g");
    made->setRange(0, 1);
    return made;
}

void grow(QValueAxis* axisToGrow, double value)
{
    if (value <= axisToGrow->max() && value >= axisToGrow->min())
        return;
    if (value > axisToGrow->max())
        axisToGrow->setMax(value * 1.1);
    if (value < axisToGrow->min())
        axisToGrow->setMin(value);
    axisToGrow->applyNiceNumbers();  // ticks at round values
}

// Appends `points` to `series` in one redraw, growing `x` and `y` to hold them; empties `points`.
void drawOnto(QLineSeries* series, QList<QPointF>& points, QValueAxis* x, QValueAxis* y)
{
    if (points.isEmpty())
        return;
    const auto [low, high] =
        std::minmax_element(points.begin(), points.end(),
                            [](const QPointF& a, const QPointF& b) { return a.y() < b.y(); });
    grow(y, low->y());
    grow(y, high->y());
    grow(x, points.last().x());
    // replace() redraws once; append() of a list adds, and redraws, point by point.
    QList<QPointF> all = series->points();
    all.append(points);
    series->replace(all);
    points.clear();
}

}  // namespace

MetricsChart::MetricsChart(QWidget* parent)
    : QWidget(parent)
    , loss_(new QLineSeries)
    , validation_(new QLineSeries)
    , tokens_(new QLineSeries)
    , mfu_(new QLineSeries)
    , lossX_(axis(tr("step")))
    , lossY_(axis(tr("loss")))
    , speedX_(axis(tr("step")))
    , tokensY_(axis(tr("tokens/s")))
    , mfuY_(axis(tr("MFU")))
    , batch_(new QTimer(this))
{
    setObjectName("metricsChart");
    loss_->setName(tr("loss"));
    validation_->setName(tr("validation loss"));
    tokens_->setName(tr("tokens/s"));
    mfu_->setName(tr("MFU"));

    auto* losses = new QChart;
    themeChart(*losses);
    losses->setTitle(tr("Loss"));
    losses->addSeries(loss_);
    losses->addSeries(validation_);
    losses->addAxis(lossX_, Qt::AlignBottom);
    losses->addAxis(lossY_, Qt::AlignLeft);
    for (QLineSeries* series : {loss_, validation_}) {
        series->attachAxis(lossX_);
        series->attachAxis(lossY_);
    }
    auto* speed = new QChart;
    themeChart(*speed);
    speed->setTitle(tr("Throughput"));
    speed->addSeries(tokens_);
    speed->addSeries(mfu_);
    speed->addAxis(speedX_, Qt::AlignBottom);
    speed->addAxis(tokensY_, Qt::AlignLeft);
    speed->addAxis(mfuY_, Qt::AlignRight);
    tokens_->attachAxis(speedX_);
    tokens_->attachAxis(tokensY_);
    mfu_->attachAxis(speedX_);
    mfu_->attachAxis(mfuY_);

    auto* lossView = new QChartView(losses, this);
    lossView->setObjectName("lossChartView");
    lossView->setAccessibleName(tr("Loss and validation loss by step"));
    lossView->setRenderHint(QPainter::Antialiasing);
    auto* speedView = new QChartView(speed, this);
    speedView->setObjectName("throughputChartView");
    speedView->setAccessibleName(tr("Tokens per second and MFU by step"));
    speedView->setRenderHint(QPainter::Antialiasing);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(lossView);
    layout->addWidget(speedView);
    batch_->setSingleShot(true);
    batch_->setInterval(100);
    connect(batch_, &QTimer::timeout, this, &MetricsChart::draw);
}

void MetricsChart::draw()
{
    drawOnto(loss_, newLoss_, lossX_, lossY_);
    drawOnto(validation_, newValidation_, lossX_, lossY_);
    drawOnto(tokens_, newTokens_, speedX_, tokensY_);
    drawOnto(mfu_, newMfu_, speedX_, mfuY_);
}

void MetricsChart::clear()
{
    batch_->stop();
    for (QList<QPointF>* waiting : {&newLoss_, &newValidation_, &newTokens_, &newMfu_})
        waiting->clear();
    for (QLineSeries* series : {loss_, validation_, tokens_, mfu_})
        series->clear();
    for (QValueAxis* each : {lossX_, lossY_, speedX_, tokensY_, mfuY_})
        each->setRange(0, 1);
}

bool MetricsChart::addLine(const std::string& json)
{
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray::fromStdString(json));
    if (!document.isObject())
        return false;
    const QJsonObject line = document.object();
    if (line.value("kind").toString() != "step" || !line.contains("step"))
        return false;
    const double step = line.value("step").toDouble();
    bool added = false;
    const auto take = [&](const char* name, QList<QPointF>& into) {
        if (!line.contains(name))
            return;
        into.append({step, line.value(name).toDouble()});
        added = true;
    };
    take("loss", newLoss_);
    take("val_loss", newValidation_);
    take("tok_per_s", newTokens_);
    take("mfu", newMfu_);
    if (added && !batch_->isActive())
        batch_->start();
    return added;
}

int MetricsChart::lossPoints() const
{
    return static_cast<int>(loss_->count());
}

int MetricsChart::validationPoints() const
{
    return static_cast<int>(validation_->count());
}

int MetricsChart::throughputPoints() const
{
    return static_cast<int>(tokens_->count());
}

}  // namespace sealtrain::gui
