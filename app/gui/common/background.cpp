// The GUI's call pool (background.h).
#include "background.h"

namespace sealtrain::gui {

QThreadPool& callPool()
{
    static QThreadPool* pool = [] {
        auto* made = new QThreadPool;  // lives as long as the process; its threads end with it
        made->setMaxThreadCount(8);
        made->setExpiryTimeout(30000);
        return made;
    }();
    return *pool;
}

}  // namespace sealtrain::gui
