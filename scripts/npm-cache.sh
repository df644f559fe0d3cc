# npm-cache.sh is sourced by the scripts that install npm packages the
# tests drive (agent-clis.sh, mcp-inspector.sh). It defines one function.
#
# npm_cache_install NAME SRC CACHE HOW BIN...
#   installs the packages pinned in SRC/package.json and SRC/package-lock.json
#   into CACHE with npm (HOW: ci for `npm ci`, install for `npm install
#   --no-save` with the lock beside it), checks that every BIN is then in
#   CACHE/node_modules/.bin, and prints CACHE. A cache that already holds
#   that lock (its sha256 in CACHE/.installed-lock) and the first BIN is
#   reused as it is. NAME prefixes the error messages. Run from the
#   repository's root.

npm_cache_install() {
	local name=$1 src=$2 cache=$3 how=$4
	shift 4
	case $how in
	ci | install) ;;
	*) echo "$name: npm_cache_install: HOW is ci or install, not $how" >&2; return 2 ;;
	esac
	local want
	want=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
	if [ -f "$cache/.installed-lock" ] && [ "$(cat "$cache/.installed-lock")" = "$want" ] &&
		[ -x "$cache/node_modules/.bin/$1" ]; then
		echo "$cache"
		return 0
	fi
	command -v npm >/dev/null || { echo "$name: npm not found" >&2; return 2; }
	mkdir -p "$cache"
	rm -f "$cache/.installed-lock"
	cp "$src/package.json" "$src/package-lock.json" "$cache/"
	if [ "$how" = ci ]; then
		npm ci --prefix "$cache" --no-audit --no-fund --loglevel=error >&2
	else
		npm install --prefix "$cache" --no-save --no-audit --no-fund --loglevel=error >&2
	fi
	local b
	for b in "$@"; do
		[ -x "$cache/node_modules/.bin/$b" ] || { echo "$name: $b missing after npm $how" >&2; return 1; }
	done
	echo "$want" >"$cache/.installed-lock"
	echo "$cache"
}
