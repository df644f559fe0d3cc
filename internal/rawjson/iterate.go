package rawjson

// Each calls fn with the raw key (without quotes, escapes left as written)
// and the value of every member of the JSON object data, in order, until fn
// returns false.
func Each(data []byte, fn func(key, val []byte) bool) error {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return ErrSyntax
	}
	i++
	for {
		i = skipWS(data, i)
		if i >= len(data) {
			return ErrSyntax
		}
		if data[i] == '}' {
			return nil
		}
		if data[i] != '"' {
			return ErrSyntax
		}
		kend, err := stringEnd(data, i+1)
		if err != nil {
			return err
		}
		key := data[i+1 : kend]
		i = skipWS(data, kend+1)
		if i >= len(data) || data[i] != ':' {
			return ErrSyntax
		}
		i = skipWS(data, i+1)
		end, err := Skip(data, i)
		if err != nil {
			return err
		}
		if !fn(key, data[i:end]) {
			return nil
		}
		i = skipWS(data, end)
		if i >= len(data) {
			return ErrSyntax
		}
		switch data[i] {
		case ',':
			i++
		case '}':
			return nil
		default:
			return ErrSyntax
		}
	}
}

// Members walks the object at the start of data (leading whitespace
// allowed), handing fn each raw key and the offset vs of its value in data;
// fn returns the offset just past the value. That lets a caller parse a
// value in place, in one pass, instead of having it skipped first and read
// again; fn can call Skip when it only wants the value's bytes. Members
// returns the offset just past the object. Like Each, it lets a comma
// before the closing brace pass.
func Members(data []byte, fn func(key, data []byte, vs int) (int, error)) (int, error) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, ErrSyntax
	}
	i++
	for {
		i = skipWS(data, i)
		if i < len(data) && data[i] == '}' {
			return i + 1, nil
		}
		if i >= len(data) || data[i] != '"' {
			return 0, ErrSyntax
		}
		kend, err := stringEnd(data, i+1)
		if err != nil {
			return 0, err
		}
		key := data[i+1 : kend]
		i = skipWS(data, kend+1)
		if i >= len(data) || data[i] != ':' {
			return 0, ErrSyntax
		}
		vs := skipWS(data, i+1)
		if vs >= len(data) {
			return 0, ErrSyntax
		}
		ve, err := fn(key, data, vs)
		if err != nil {
			return 0, err
		}
		i = skipWS(data, ve)
		if i >= len(data) {
			return 0, ErrSyntax
		}
		switch data[i] {
		case '}':
			return i + 1, nil
		case ',':
			i++
		default:
			return 0, ErrSyntax
		}
	}
}

// EachElem calls fn with every element of the JSON array data, in order.
// Anything but an array (null, an object, a string) is an empty list, so
// an optional list needs no check first; ErrSyntax reports an array that
// is broken after the elements fn has seen.
func EachElem(data []byte, fn func(val []byte)) error {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == ']' {
		return nil
	}
	for {
		vs := skipWS(data, i)
		ve, err := Skip(data, vs)
		if err != nil {
			return err
		}
		fn(data[vs:ve])
		i = skipWS(data, ve)
		if i >= len(data) {
			return ErrSyntax
		}
		switch data[i] {
		case ']':
			return nil
		case ',':
			i++
		default:
			return ErrSyntax
		}
	}
}
