// The CAVP/RFC vector file reader (cavp.h).
#include "cavp.h"

#include <fstream>

namespace sealtrain::testing {
namespace {

std::string trimmed(std::string text)
{
    text.erase(0, text.find_first_not_of(' '));
    text.erase(text.find_last_not_of(' ') + 1);
    return text;
}

class RecordCollector {
public:
    void blankLine()
    {
        if (!numbered_)
            flush();
    }
    void section(const std::string& key, const std::string& value)
    {
        flush();
        section_.insert_or_assign(key, value);
        current_ = section_;
    }
    void field(const std::string& key, const std::string& value)
    {
        if (key == "Count" || key == "COUNT") {
            numbered_ = true;
            flush();
        }
        current_.insert_or_assign(key, value);
    }
    void fail() { current_.emplace("FAIL", "1"); }
    std::vector<CavpRecord> finish()
    {
        flush();
        return std::move(records_);
    }

private:
    void flush()
    {
        if (current_.size() > section_.size())
            records_.push_back(current_);
        current_ = section_;
    }

    std::vector<CavpRecord> records_;
    CavpRecord section_;
    CavpRecord current_;
    bool numbered_ = false;
};

}  // namespace

std::vector<CavpRecord> readCavpRecords(const std::filesystem::path& path)
{
    RecordCollector records;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (trimmed(line).empty()) {
            records.blankLine();
            continue;
        }
        if (line[0] == '#')
            continue;
        const bool isSection = line.front() == '[' && line.back() == ']';
        const std::string body = isSection ? line.substr(1, line.size() - 2) : line;
        const auto equals = body.find('=');
        if (equals == std::string::npos) {
            if (trimmed(body) == "FAIL")
                records.fail();
            continue;
        }
        const std::string key = trimmed(body.substr(0, equals));
        const std::string value = trimmed(body.substr(equals + 1));
        if (isSection)
            records.section(key, value);
        else
            records.field(key, value);
    }
    return records.finish();
}

}  // namespace sealtrain::testing
