# What zsh's completion offers for a command line, one match per line.
#
#   zsh -f zsh_complete.zsh DIR 'pinv invert file.pinv '
#
# DIR holds the completion script `_pinv`. An interactive zsh runs in a pseudo-terminal (zpty)
# with compinit; `compadd` is wrapped to print each match it adds, the line is typed with a TAB,
# and the shell exits after the completion (comppostfuncs). The markers are split in the typed
# code ("<hi""t>") so that the terminal's echo of that code does not match them.
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=''; RPROMPT=''; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z 'bindkey "^I" complete-word; zstyle ":completion:*" insert-tab false'
zpty -w z 'compadd () { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi; typeset -a __hits; builtin compadd -A __hits "$@"; local h; for h in $__hits; do print -r -- "<hi""t>$h</hi""t>"; done; builtin compadd "$@" }'
zpty -w z 'comppostfuncs=(__done); __done () { print -r -- "<do""ne>"; exit }'
zpty -n -w z "$2"$'\t'
local out line
SECONDS=0
while (( SECONDS < 20 )); do
  if zpty -r -t z line; then
    out+=$line
    [[ $line == *'<done>'* ]] && break
  else
    zpty -t z || break
    sleep 0.05
  fi
done
print -r -- "$out" | grep -ao '<hit>[^<]*</hit>' | sed 's/<hit>//; s/<\/hit>//'
zpty -d z
