# bash completion for journey. Subcommands and flags are read from `journey help`, so they
# never drift from the binary.
_journey() {
    local cur=${COMP_WORDS[COMP_CWORD]} sub="" w
    for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
        case $w in -*) ;; *) sub=$w; break ;; esac
    done
    if [[ -z $sub && $cur != -* ]]; then
        COMPREPLY=($(compgen -W "$(journey help 2>/dev/null | awk '/^Subcommands:/{s=1;next} s&&NF{print $1}') help" -- "$cur"))
    elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(journey help $sub 2>/dev/null | grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,' | sort -u)" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -F _journey journey
