// QR codes for TOTP enrolment (qr_code.h).
#include "qr_code.h"

#include <qrencode.h>

#include <QLabel>
#include <QPainter>
#include <QPixmap>

#include <algorithm>
#include <memory>

namespace sealtrain::gui {

QrMatrix encodeQr(const QByteArray& text)
{
    QrMatrix matrix;
    // The string is NUL-terminated by QByteArray; version 0 lets libqrencode pick the smallest.
    std::unique_ptr<QRcode, decltype(&QRcode_free)> code(
        QRcode_encodeString(text.constData(), 0, QR_ECLEVEL_M, QR_MODE_8, 1), &QRcode_free);
    if (!code || code->width <= 0)
        return matrix;
    matrix.width = code->width;
    const auto cells =
        static_cast<std::size_t>(code->width) * static_cast<std::size_t>(code->width);
    matrix.dark.resize(cells);
    for (std::size_t i = 0; i < cells; ++i)
        matrix.dark[i] = (code->data[i] & 1U) != 0;  // bit 0: a dark module
    return matrix;
}

QImage drawQr(const QrMatrix& matrix, int scale)
{
    if (matrix.width <= 0 || scale <= 0)
        return {};
    const int side = (matrix.width + 2 * kQrQuietZone) * scale;
    QImage image(side, side, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    for (int y = 0; y < matrix.width; ++y)
        for (int x = 0; x < matrix.width; ++x)
            if (matrix.at(x, y))
                painter.fillRect((x + kQrQuietZone) * scale, (y + kQrQuietZone) * scale, scale,
                                 scale, Qt::black);
    return image;
}

QImage qrForScreen(const QByteArray& text)
{
    const QrMatrix matrix = encodeQr(text);
    const int scale = std::max(4, 240 / std::max(1, matrix.width + 2 * kQrQuietZone));
    return drawQr(matrix, scale);
}

void showQr(QLabel& label, const QByteArray& text)
{
    const QPixmap pixmap = QPixmap::fromImage(qrForScreen(text));
    label.setPixmap(pixmap);
    label.setMinimumSize(pixmap.size());
}

}  // namespace sealtrain::gui
