echo "script in $(basename "$PWD") for {{.inputs.who}}"
