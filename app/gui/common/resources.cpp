// The application's built-in resources (resources.h).
#include "resources.h"

#include <QtGlobal>

#include <mutex>

// Q_INIT_RESOURCE declares a function at the point of use, so it must sit outside any namespace,
// the anonymous one included.
static void initialiseSealtrainResources()
{
    Q_INIT_RESOURCE(sealtrain);
}

namespace sealtrain::gui {

void ensureResources()
{
    static std::once_flag once;
    std::call_once(once, initialiseSealtrainResources);
}

}  // namespace sealtrain::gui
