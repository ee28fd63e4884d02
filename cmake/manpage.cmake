# Writes journey.1 from the binary's own help (`journey --help`, then `journey help SUB` for each
# subcommand), so the man page says exactly what --help says. Run as
#   cmake -DJOURNEY=<binary> -DOUT=<journey.1> -DVERSION=<x.y.z> -P manpage.cmake
function(roff_escape text out)
  string(REPLACE "\\" "\\e" text "${text}")
  # A line starting with . or ' would be a roff request.
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND ${JOURNEY} --help OUTPUT_VARIABLE main_help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "journey --help failed")
endif()
roff_escape("${main_help}" main_help)
set(page ".TH JOURNEY 1 \"\" \"journey ${VERSION}\" \"User Commands\"\n")
string(APPEND page ".SH NAME\njourney \\- run transformer language models on the CPU\n")
string(APPEND page ".SH SYNOPSIS\n.B journey\n[\\fB\\-v\\fR|\\fB\\-q\\fR] \\fISUBCOMMAND\\fR [\\fIOPTIONS\\fR]\n")
string(APPEND page ".SH DESCRIPTION\n.nf\n${main_help}.fi\n")

string(REGEX MATCH "Subcommands:\n(.*)" subs_block "${main_help}")
string(REGEX MATCHALL "\n  ([a-z]+) " subs "${CMAKE_MATCH_1}")
string(REGEX MATCHALL "(^|\n)  [a-z]+ " lines "${CMAKE_MATCH_1}")
foreach(line IN LISTS lines)
  string(STRIP "${line}" sub)
  execute_process(COMMAND ${JOURNEY} help ${sub} OUTPUT_VARIABLE sub_help)
  roff_escape("${sub_help}" sub_help)
  string(APPEND page ".SH \"journey ${sub}\"\n.nf\n${sub_help}.fi\n")
endforeach()

string(APPEND page ".SH ENVIRONMENT\n.TP\n.B JOURNEY_MODEL\nThe model used when \\fB\\-m\\fR is not given.\n")
string(APPEND page ".SH FILES\n.TP\n.I <prefix>/share/journey/models/default\nThe default model, used when neither \\fB\\-m\\fR nor \\fBJOURNEY_MODEL\\fR names one.\n")
string(APPEND page ".SH EXIT STATUS\n0 success; 1 bad usage; 2 unusable model or tokenizer file; 3 bad input or a runtime failure; 130/143 interrupted by SIGINT/SIGTERM.\n")
file(WRITE "${OUT}" "${page}")
