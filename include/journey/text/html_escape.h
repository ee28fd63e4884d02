#pragma once
#include <string>

namespace journey {

// HTML/XML escaping as Jinja's `escape` filter does it (markupsafe): & < > " ' become
// &amp; &lt; &gt; &#34; &#39;. Used by chat templates and by the trace page.
std::string html_escape(const std::string& s);

}  // namespace journey
