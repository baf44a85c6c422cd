// QR codes for TOTP enrolment (issue #29): an otpauth:// URI drawn so that an authenticator app
// scans it off the screen. Encoding is Debian's libqrencode (error correction M, byte mode);
// this draws its modules, black on white with the four-module quiet zone the standard asks for.
#pragma once

#include <QImage>
#include <QString>

class QLabel;

#include <vector>

namespace sealtrain::gui {

struct QrMatrix {
    int width = 0;           // modules on a side; 0 when the text could not be encoded
    std::vector<bool> dark;  // width * width, row by row
    [[nodiscard]] bool at(int x, int y) const
    {
        return dark[static_cast<std::size_t>(y) * static_cast<std::size_t>(width)
                    + static_cast<std::size_t>(x)];
    }
};

inline constexpr int kQrQuietZone = 4;

[[nodiscard]] QrMatrix encodeQr(const QByteArray& text);
// `scale` pixels a module, the quiet zone included; a null image for an empty matrix.
[[nodiscard]] QImage drawQr(const QrMatrix& matrix, int scale);
// `text` encoded and drawn about 240 pixels wide (at least 4 a module): at 96 dpi, about 4 mm a
// module, which a phone scans at arm's length.
[[nodiscard]] QImage qrForScreen(const QByteArray& text);
// Shows `text`'s code in `label`, which is made large enough to show all of it (a code cut off
// does not scan).
void showQr(QLabel& label, const QByteArray& text);

}  // namespace sealtrain::gui
