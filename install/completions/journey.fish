# fish completion for journey. Subcommands and flags are read from `journey help`, so they never
# drift from the binary.
function __journey_subcommands
    journey help 2>/dev/null | awk '/^Subcommands:/{s=1;next} s&&NF{print $1}'
    echo help
end
function __journey_flags
    set -l sub (commandline -opc)[2]
    journey help $sub 2>/dev/null | grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,' | sort -u
end
complete -c journey -f -n __fish_use_subcommand -a '(__journey_subcommands)'
complete -c journey -n 'not __fish_use_subcommand' -a '(__journey_flags)'
